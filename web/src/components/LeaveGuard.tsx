import * as AlertDialog from '@radix-ui/react-alert-dialog';
import { useEffect } from 'react';
import { useBlocker } from 'react-router-dom';

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
      <AlertDialog.Portal>
        <AlertDialog.Overlay className="overlay" />
        <AlertDialog.Content className="dialog">
          <AlertDialog.Title>Leave without saving?</AlertDialog.Title>
          <AlertDialog.Description>{description}</AlertDialog.Description>
          <div className="dialog-actions">
            <AlertDialog.Cancel asChild>
              <button type="button" className="secondary">
                Stay
              </button>
            </AlertDialog.Cancel>
            <button type="button" className="danger" onClick={() => blocker.proceed?.()}>
              Leave
            </button>
          </div>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}
