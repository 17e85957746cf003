import type { ProviderKindView } from '@modelgate/admin-api';

/**
 * The fields of a kind's settings, generated from the schema the gateway validates them with
 * (GET /admin/v1/providers/kinds): text, number, switch, list or JSON by the setting's type; a
 * secret is a password field, never filled in again — left empty on an edit, it is kept.
 */

interface PropertySchema {
  type?: string;
  description?: string;
  default?: unknown;
  items?: { type?: string };
}

/** What the fields hold: each setting as typed (text); turned into the setting's type by `settingsOf`. */
export type FieldValues = Record<string, string | boolean>;

function propertiesOf(kind: ProviderKindView): [string, PropertySchema][] {
  return Object.entries((kind.settings_schema.properties ?? {}) as Record<string, PropertySchema>);
}

function requiredOf(kind: ProviderKindView): string[] {
  return (kind.settings_schema.required ?? []) as string[];
}

/** The fields' values of settings as the gateway lists them (secrets are never among them). */
export function valuesOf(kind: ProviderKindView, settings: Record<string, unknown>): FieldValues {
  const values: FieldValues = {};
  for (const [field, property] of propertiesOf(kind)) {
    const value = settings[field];
    if (value === undefined) continue;
    if (property.type === 'boolean') values[field] = value === true;
    else if (property.type === 'array' && property.items?.type === 'string') values[field] = (value as string[]).join(', ');
    else if (property.type === 'string' || property.type === 'integer' || property.type === 'number') values[field] = String(value);
    else values[field] = JSON.stringify(value);
  }
  return values;
}

/**
 * The settings the fields say, typed as the schema wants: an empty field is left out (on an
 * edit: removed, or for a secret, kept). A number or JSON that does not parse goes as typed,
 * so the gateway's answer names the field.
 */
export function settingsOf(kind: ProviderKindView, values: FieldValues, editing: boolean): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  for (const [field, property] of propertiesOf(kind)) {
    const value = values[field];
    const secret = kind.secret_fields.includes(field);
    if (property.type === 'boolean') {
      if (value !== undefined) settings[field] = value === true;
      continue;
    }
    const text = typeof value === 'string' ? value.trim() : '';
    if (text === '') {
      if (editing && !secret) settings[field] = null;
      continue;
    }
    if (property.type === 'integer' || property.type === 'number') settings[field] = Number.isFinite(Number(text)) ? Number(text) : text;
    else if (property.type === 'array' && property.items?.type === 'string') settings[field] = text.split(',').map((item) => item.trim()).filter((item) => item.length > 0);
    else if (property.type === 'string') settings[field] = text;
    else {
      try {
        settings[field] = JSON.parse(text);
      } catch {
        settings[field] = text;
      }
    }
  }
  return settings;
}

export function SettingsFields(props: {
  idPrefix: string;
  kind: ProviderKindView;
  values: FieldValues;
  onChange: (values: FieldValues) => void;
  /** The fingerprint of each secret already saved (an edit): its field may stay empty. */
  saved?: Record<string, string>;
}) {
  const { idPrefix, kind, values, onChange, saved } = props;
  const required = requiredOf(kind);
  return (
    <>
      {propertiesOf(kind).map(([field, property]) => {
        const id = `${idPrefix}-${field}`;
        const secret = kind.secret_fields.includes(field);
        const variables = kind.environment.find((setting) => setting.field === field)?.variables ?? [];
        const help = [property.description, variables.length > 0 ? `environment: ${variables.join(', ')}` : undefined, saved?.[field] !== undefined ? `saved: ${saved[field]}; leave empty to keep it` : undefined]
          .filter((part) => part !== undefined)
          .join(' · ');
        const set = (value: string | boolean) => onChange({ ...values, [field]: value });
        if (property.type === 'boolean') {
          return (
            <div className="field" key={field}>
              <label htmlFor={id}>
                <input id={id} type="checkbox" checked={values[field] === true} onChange={(event) => set(event.target.checked)} /> {field}
              </label>
              {help !== '' && <small className="muted">{help}</small>}
            </div>
          );
        }
        const multiline = property.type === 'object' || (property.type === 'array' && property.items?.type !== 'string');
        const common = {
          id,
          value: typeof values[field] === 'string' ? values[field] : '',
          'aria-describedby': help !== '' ? `${id}-help` : undefined,
          required: required.includes(field) && property.default === undefined && saved?.[field] === undefined,
          placeholder: property.default !== undefined ? String(typeof property.default === 'object' ? JSON.stringify(property.default) : property.default) : undefined,
        };
        return (
          <div className="field" key={field}>
            <label htmlFor={id}>{field}</label>
            {multiline ? (
              <textarea {...common} rows={3} onChange={(event) => set(event.target.value)} />
            ) : (
              <input
                {...common}
                type={secret ? 'password' : property.type === 'integer' || property.type === 'number' ? 'number' : 'text'}
                autoComplete={secret ? 'new-password' : 'off'}
                onChange={(event) => set(event.target.value)}
              />
            )}
            {help !== '' && (
              <small id={`${id}-help`} className="muted">
                {help}
              </small>
            )}
          </div>
        );
      })}
    </>
  );
}
