/** A page's or form's error, announced to screen readers as it appears; nothing while there is none. */
export function ErrorAlert(props: { message: string | null; id?: string }) {
  if (props.message === null) return null;
  return (
    <p id={props.id} className="error" role="alert">
      {props.message}
    </p>
  );
}
