import * as AlertDialog from '@radix-ui/react-alert-dialog';
import { useEffect } from 'react';
import { useBlocker } from 'react-router-dom';
import { ConfirmDialogBody } from './ConfirmDialogBody.js';

/**
 * Asks before a page with unsaved work is left: the browser's own prompt when the tab is
 * closed or reloaded, this dialog when the user follows a link of the dashboard.
 */
export function LeaveGuard({ when, description }: { when: boolean; description: string }) {
  const blocker = useBlocker(({ currentLocation, nextLocation }) => when && currentLocation.pathname !== nextLocation.pathname);

  useEffect(() => {
    if (!when) return;
    const onBeforeUnload = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener('beforeunload', onBeforeUnload);
    return () => window.removeEventListener('beforeunload', onBeforeUnload);
  }, [when]);

  return (
    <AlertDialog.Root open={blocker.state === 'blocked'} onOpenChange={(open) => !open && blocker.reset?.()}>
      <ConfirmDialogBody
        title="Leave without saving?"
        description={description}
        cancelLabel="Stay"
        action={
          <button type="button" className="danger" onClick={() => blocker.proceed?.()}>
            Leave
          </button>
        }
      />
    </AlertDialog.Root>
  );
}
