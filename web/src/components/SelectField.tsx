export interface SelectOption {
  value: string;
  label: string;
}

/** The label of `value` among `options`, or the value itself when none has it. */
export function labelOf(options: readonly SelectOption[], value: string): string {
  return options.find((option) => option.value === value)?.label ?? value;
}

/** A labelled drop-down of a filter or form: one way to draw every select of the dashboard. */
export function SelectField(props: { id: string; label: string; value: string; options: readonly SelectOption[]; onChange: (value: string) => void }) {
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      <select id={props.id} value={props.value} onChange={(event) => props.onChange(event.target.value)}>
        {props.options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </div>
  );
}
