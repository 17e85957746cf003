import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router-dom';
import type { AuditEntryView } from '@modelgate/admin-api';
import { adminApi, ApiError, type AuditFilter } from '../../api.js';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Pager } from '../../components/Pager';
import { changedFields } from './changes.js';

/**
 * The audit log (administrators only): who changed what and when, newest first a page at a
 * time, filtered by actor, action, target and time (kept in the URL), each entry's before and
 * after side by side, and the same filters exported as CSV.
 */

const PAGE_SIZE = 50;
const FIELDS = ['actor', 'action', 'target', 'since', 'until'] as const;
const messageOf = (failure: unknown) => (failure instanceof ApiError ? failure.message : String(failure));
const shown = (value: unknown) => (value === undefined ? '—' : JSON.stringify(value));

function filterOf(params: URLSearchParams): AuditFilter {
  return Object.fromEntries(FIELDS.flatMap((field) => (params.get(field) ? [[field, params.get(field)!]] : [])));
}

function Changes({ entry }: { entry: AuditEntryView }) {
  const rows = changedFields(entry.before, entry.after);
  if (rows.length === 0) return <p className="muted">No before or after recorded.</p>;
  return (
    <table className="diff">
      <caption>
        Changes of {entry.action} on {entry.target.type} {entry.target.id ?? ''}
      </caption>
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">Before</th>
          <th scope="col">After</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.path} className={row.changed ? 'changed' : undefined}>
            <th scope="row">
              <code>{row.path}</code>
              {row.changed && <span className="visually-hidden"> (changed)</span>}
            </th>
            <td>
              <code>{shown(row.before)}</code>
            </td>
            <td>
              <code>{shown(row.after)}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function AuditPage() {
  const [params, setParams] = useSearchParams();
  const filter = filterOf(params);
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const [open, setOpen] = useState<string | null>(null);
  const page = useQuery({
    queryKey: ['audit', filter, cursor],
    queryFn: () => adminApi.audit.page(filter, cursor, PAGE_SIZE),
    placeholderData: keepPreviousData,
  });

  const apply = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const next = new URLSearchParams();
    for (const field of FIELDS) {
      const value = String(form.get(field) ?? '').trim();
      if (value !== '') next.set(field, value);
    }
    setCursors([]);
    setParams(next);
  };

  return (
    <section aria-labelledby="audit-title">
      <div className="page-head">
        <h1 id="audit-title">Audit log</h1>
        <a className="button secondary" href={adminApi.audit.exportUrl(filter)} download>
          Export CSV
        </a>
      </div>
      <form className="filters" aria-label="Audit filters" onSubmit={apply} key={params.toString()}>
        <div className="field">
          <label htmlFor="audit-actor">Actor</label>
          <input id="audit-actor" name="actor" defaultValue={filter.actor ?? ''} placeholder="email, user id, admin-token, system" />
        </div>
        <div className="field">
          <label htmlFor="audit-action">Action</label>
          <input id="audit-action" name="action" defaultValue={filter.action ?? ''} placeholder="key.revoke, or key for all" />
        </div>
        <div className="field">
          <label htmlFor="audit-target">Target id</label>
          <input id="audit-target" name="target" defaultValue={filter.target ?? ''} />
        </div>
        <div className="field">
          <label htmlFor="audit-since">Since</label>
          <input id="audit-since" name="since" defaultValue={filter.since ?? ''} placeholder="24h, 2026-12-01" />
        </div>
        <div className="field">
          <label htmlFor="audit-until">Until</label>
          <input id="audit-until" name="until" defaultValue={filter.until ?? ''} />
        </div>
        <div className="field actions">
          <button type="submit">Apply</button>
        </div>
      </form>
      <ErrorAlert message={page.error === null ? null : messageOf(page.error)} />
      <table>
        <caption>Audit entries, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Actor</th>
            <th scope="col">Action</th>
            <th scope="col">Target</th>
            <th scope="col">
              <span className="visually-hidden">Details</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {page.data?.data.length === 0 && (
            <tr>
              <td colSpan={5}>No entries match.</td>
            </tr>
          )}
          {page.data?.data.flatMap((entry) => [
            <tr key={entry.id}>
              <td>{new Date(entry.at).toLocaleString()}</td>
              <td>{entry.actor.name}</td>
              <td>
                <code>{entry.action}</code>
              </td>
              <td>
                {entry.target.type} <code>{entry.target.id ?? ''}</code>
              </td>
              <td>
                <button type="button" className="secondary small" aria-expanded={open === entry.id} onClick={() => setOpen(open === entry.id ? null : entry.id)}>
                  {open === entry.id ? 'Hide changes' : 'Show changes'}
                </button>
              </td>
            </tr>,
            ...(open === entry.id
              ? [
                  <tr key={`${entry.id}-changes`}>
                    <td colSpan={5}>
                      <Changes entry={entry} />
                    </td>
                  </tr>,
                ]
              : []),
          ])}
        </tbody>
      </table>
      <Pager
        page={cursors.length + 1}
        hasPrevious={cursors.length > 0}
        hasMore={page.data?.has_more === true}
        onPrevious={() => setCursors(cursors.slice(0, -1))}
        onNext={() => page.data?.next_cursor != null && setCursors([...cursors, page.data.next_cursor])}
      />
    </section>
  );
}
