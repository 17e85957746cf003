import * as Dialog from '@radix-ui/react-dialog';
import { useRef, type ReactNode } from 'react';

/**
 * A dialog with a title, focus kept inside, closed by Escape or its Close button. Opened by
 * state rather than a Radix trigger, it gives focus back to the element that had it when it
 * opened (the button that opened it), not to the page's body.
 */
export function Modal({ open, onOpenChange, title, children }: { open: boolean; onOpenChange: (open: boolean) => void; title: string; children: ReactNode }) {
  const opener = useRef<HTMLElement | null>(null);
  // Noted while rendering the opening: by the time the dialog's effects run, focus is inside it.
  if (open && opener.current === null && document.activeElement instanceof HTMLElement && document.activeElement !== document.body) opener.current = document.activeElement;
  return (
    <Dialog.Root open={open} onOpenChange={onOpenChange}>
      <Dialog.Portal>
        <Dialog.Overlay className="overlay" />
        <Dialog.Content
          className="dialog wide"
          aria-describedby={undefined}
          onCloseAutoFocus={(event) => {
            const back = opener.current;
            opener.current = null;
            if (back?.isConnected === true) {
              event.preventDefault();
              back.focus();
            }
          }}
        >
          <Dialog.Title>{title}</Dialog.Title>
          {children}
          <Dialog.Close asChild>
            <button type="button" className="close" aria-label="Close">
              ×
            </button>
          </Dialog.Close>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
