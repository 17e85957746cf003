/**
 * Projects' `allowedTools`, read from the database at most once per `refreshMs` per project
 * (a change made in the dashboard applies within that time on every instance), so a session's
 * requests do not each wait for a query. A read that fails keeps the last list known.
 */
export class ProjectToolLists {
  private readonly cached = new Map<string, { list: readonly string[] | null; readAt: number; pending?: Promise<readonly string[] | null> }>();

  constructor(
    private readonly read: (projectId: string) => Promise<readonly string[] | null>,
    private readonly refreshMs: number,
  ) {}

  async of(projectId: string): Promise<readonly string[] | null> {
    const entry = this.cached.get(projectId);
    if (entry !== undefined && Date.now() - entry.readAt < this.refreshMs) return entry.list;
    if (entry?.pending !== undefined) return entry.pending;
    const pending = this.read(projectId).then(
      (list) => {
        this.cached.set(projectId, { list, readAt: Date.now() });
        return list;
      },
      (error: unknown) => {
        // Never known: the caller's request fails (storage_unavailable); known: the last list holds.
        if (entry === undefined) {
          this.cached.delete(projectId);
          throw error;
        }
        this.cached.set(projectId, { list: entry.list, readAt: entry.readAt });
        return entry.list;
      },
    );
    this.cached.set(projectId, { list: entry?.list ?? null, readAt: entry?.readAt ?? 0, pending });
    return pending;
  }

  /** Applies a change made through this instance at once. */
  set(projectId: string, list: readonly string[] | null): void {
    this.cached.set(projectId, { list, readAt: Date.now() });
  }
}
