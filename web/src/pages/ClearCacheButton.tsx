import { useMutation } from '@tanstack/react-query';
import { adminApi, ApiError } from '../api.js';
import { ConfirmButton } from '../components/ConfirmButton.js';
import { formatCount } from '../format.js';

/**
 * Clears one project's cached answers (DELETE /admin/v1/cache?project=, audited), after a
 * confirmation; says how many went, or why it failed.
 */
export function ClearCacheButton({ project }: { project: string }) {
  const clearing = useMutation({ mutationFn: () => adminApi.cache.clear(project) });
  const done = clearing.data;
  return (
    <div className="field">
      <ConfirmButton
        label="Clear cache"
        title={`Clear the response cache of ${project}?`}
        description={
          <p>
            Every cached answer of this project (its keys&apos; own too) is removed; their next requests are answered by the providers again. With Redis
            this clears every instance; without it, only the instance that serves the dashboard.
          </p>
        }
        confirmLabel="Clear cache"
        onConfirm={async () => {
          await clearing.mutateAsync().catch(() => undefined);
        }}
      />
      <span role="status" className="muted">
        {done !== undefined && `Cleared ${formatCount(done.cleared)} cached ${done.cleared === 1 ? 'answer' : 'answers'} of ${project}.`}
        {clearing.error !== null && `The cache was not cleared: ${clearing.error instanceof ApiError ? clearing.error.message : String(clearing.error)}`}
      </span>
    </div>
  );
}
