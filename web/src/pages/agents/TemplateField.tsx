import { useLayoutEffect, useRef, useState, type KeyboardEvent } from 'react';

const OPEN_PLACEHOLDER = /\{\{\s*([\w.]*)$/;
const MAX_SUGGESTIONS = 12;

/**
 * A template setting (`{{ path }}` placeholders) with autocomplete: typing `{{` offers the
 * paths the graph has (`input`, `<node>.content`, `<node>.json.<field>`, `vars.<name>`);
 * arrows choose, Enter or Tab inserts, Escape closes.
 */
export function TemplateField(props: {
  id: string;
  label: string;
  value: string;
  paths: readonly string[];
  onChange: (value: string) => void;
  invalid: boolean;
  describedBy?: string | undefined;
  rows?: number;
}) {
  const area = useRef<HTMLTextAreaElement>(null);
  const [query, setQuery] = useState<string | null>(null);
  const [active, setActive] = useState(0);
  const matches = query === null ? [] : props.paths.filter((path) => path.startsWith(query) && path !== query).slice(0, MAX_SUGGESTIONS);
  const open = matches.length > 0;
  const listId = `${props.id}-paths`;

  const look = (value: string, caret: number) => {
    const match = OPEN_PLACEHOLDER.exec(value.slice(0, caret));
    setQuery(match === null ? null : match[1]!);
    setActive(0);
  };

  // Where the caret goes once an inserted path is on screen: set as React commits the new value,
  // before the next keystroke. A caret set a frame later moved back over what was typed since.
  const caretAfterInsert = useRef<{ value: string; position: number } | null>(null);
  useLayoutEffect(() => {
    const pending = caretAfterInsert.current;
    const element = area.current;
    if (pending === null || element === null || element.value !== pending.value) return;
    caretAfterInsert.current = null;
    element.setSelectionRange(pending.position, pending.position);
  }, [props.value]);

  const insert = (path: string) => {
    const element = area.current;
    if (element === null || query === null) return;
    const caret = element.selectionStart;
    const before = props.value.slice(0, caret - query.length);
    const rest = props.value.slice(caret);
    const after = rest.replace(/^\s*\}\}/, '');
    const value = `${before}${path}}}${after}`;
    caretAfterInsert.current = { value, position: before.length + path.length + 2 };
    props.onChange(value);
    setQuery(null);
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (!open) return;
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      setActive((index) => (index + (event.key === 'ArrowDown' ? 1 : matches.length - 1)) % matches.length);
    } else if (event.key === 'Enter' || event.key === 'Tab') {
      event.preventDefault();
      insert(matches[active]!);
    } else if (event.key === 'Escape') {
      event.preventDefault();
      setQuery(null);
    }
  };

  return (
    <div className="field template-field">
      <label htmlFor={props.id}>{props.label}</label>
      <textarea
        ref={area}
        id={props.id}
        rows={props.rows ?? 2}
        value={props.value}
        role="combobox"
        aria-autocomplete="list"
        aria-expanded={open}
        aria-controls={listId}
        aria-activedescendant={open ? `${listId}-${active}` : undefined}
        aria-invalid={props.invalid}
        aria-describedby={props.describedBy}
        onChange={(event) => {
          props.onChange(event.target.value);
          look(event.target.value, event.target.selectionStart);
        }}
        onKeyDown={onKeyDown}
        onBlur={() => setQuery(null)}
      />
      <ul id={listId} role="listbox" aria-label="Suggested paths" className="suggestions" hidden={!open}>
        {matches.map((path, index) => (
          <li
            key={path}
            id={`${listId}-${index}`}
            role="option"
            aria-selected={index === active}
            onMouseDown={(event) => {
              event.preventDefault();
              insert(path);
            }}
          >
            {`{{${path}}}`}
          </li>
        ))}
      </ul>
    </div>
  );
}
