import type { ReactNode } from 'react';

/** Where a live entry comes from (the shipped catalog, the config file, the environment, the admin API), "(read-only)" when it cannot be changed here, then `children`. */
export function SourceCell({ entry, children }: { entry: { origin: string; read_only: boolean }; children?: ReactNode }) {
  return (
    <>
      {entry.origin}
      {entry.read_only && <span className="muted"> (read-only)</span>}
      {children}
    </>
  );
}
