import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams } from 'react-router-dom';
import type { LogDetailView } from '@modelgate/admin-api';
import { adminApi, ApiError } from '../api.js';
import { curlCommand, formatCount, formatTime, formatUsd } from '../format.js';
import { useSession } from '../session.js';
import { ErrorAlert } from '../components/ErrorAlert';

/** Marks redacted values so they read as redactions, not as content. */
function JsonBlock({ value, label, absent }: { value: unknown; label: string; absent: string }) {
  if (value === null || value === undefined) return <p className="muted">{absent}</p>;
  const text = JSON.stringify(value, null, 2);
  const parts = text.split(/(\[redacted[^\]"]*\])/g);
  return (
    <pre aria-label={label} tabIndex={0}>
      {parts.map((part, index) =>
        /^\[redacted/.test(part) ? (
          <mark key={index} className="redacted" title="removed by the gateway's redaction before storage">
            {part}
          </mark>
        ) : (
          part
        ),
      )}
    </pre>
  );
}

/**
 * The caller's fields a translation left out because they only tune how the API's own vendor
 * serves a request (decisions §9): the same list the answer named in `x-modelgate-dropped`.
 */
function DroppedFields({ detail }: { detail: Record<string, unknown> | null }) {
  const fields = Array.isArray(detail?.droppedFields) ? detail.droppedFields.filter((field): field is string => typeof field === 'string') : [];
  if (fields.length === 0) return null;
  return (
    <>
      <h2 id="dropped-title">Fields left out</h2>
      <p className="muted">
        The model is another vendor&apos;s than the API the client spoke, and these fields only tune that vendor&apos;s service, so the translation left them
        out. The answer named them in its <code>x-modelgate-dropped</code> header.
      </p>
      <ul aria-labelledby="dropped-title" className="dropped-fields">
        {fields.map((field) => (
          <li key={field}>
            <code>{field}</code>
          </li>
        ))}
      </ul>
    </>
  );
}

/** A curl command that repeats the call, with the key left as a variable: no secret is ever in it. */
export function curlOf(record: LogDetailView, origin: string): string {
  return curlCommand(`${origin}${record.endpoint}`, record.request_payload, record.platform === null ? {} : { 'X-Platform-ID': record.platform });
}

export function LogDetailPage() {
  const { requestId = '' } = useParams();
  const { session } = useSession();
  const query = useQuery({ queryKey: ['log', requestId], queryFn: () => adminApi.logs.get(requestId) });
  const record: LogDetailView | null = query.data ?? null;
  const error = query.error === null ? null : query.error instanceof ApiError ? query.error.message : String(query.error);
  const [copied, setCopied] = useState(false);

  if (error !== null)
    return (
      <section>
        <h1>Request {requestId}</h1>
        <ErrorAlert message={error} />
        <Link to="/logs">Back to the request log</Link>
      </section>
    );
  if (record === null) return <p role="status">Loading…</p>;

  const facts: [string, string][] = [
    ['Request id', record.request_id],
    ['Time (UTC)', formatTime(record.created_at)],
    ['Endpoint', record.endpoint],
    ['Status', `${record.status}${record.error_code !== null ? ` ${record.error_code}` : ''}`],
    ['Key', record.key_name === null || record.key_name === undefined ? (record.fingerprint ?? '—') : `${record.key_name} (${record.fingerprint ?? record.key_id ?? ''})`],
    ['Project', record.project_id ?? '—'],
    ['Platform', record.platform ?? '—'],
    ['Model asked for', record.requested_model ?? '—'],
    ['Model that served', record.resolved_model ?? '—'],
    ['Streaming', record.streaming ? 'yes' : 'no'],
    ['Latency', `${record.latency_ms} ms${record.upstream_latency_ms !== null ? ` (provider ${record.upstream_latency_ms} ms)` : ''}`],
    ['Prompt tokens', formatCount(record.usage?.prompt_tokens)],
    ['Completion tokens', formatCount(record.usage?.completion_tokens)],
    ['Total tokens', formatCount(record.usage?.total_tokens)],
    ['Cost', `${formatUsd(record.cost_usd)}${record.cost_is_starting_price ? ' (starting price)' : ''}`],
  ];

  return (
    <section aria-labelledby="detail-title">
      <p>
        <Link to="/logs">← Request log</Link>
      </p>
      <div className="page-head">
        <h1 id="detail-title">Request {record.request_id}</h1>
        <button
          type="button"
          className="secondary"
          onClick={() => {
            void navigator.clipboard?.writeText(curlOf(record, window.location.origin)).then(() => setCopied(true));
          }}
        >
          {copied ? 'Copied' : 'Copy as curl'}
        </button>
      </div>
      <span role="status" className="visually-hidden">
        {copied ? 'curl command copied; it uses $MODELGATE_API_KEY instead of the key' : ''}
      </span>
      <dl className="facts">
        {facts.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      <DroppedFields detail={record.detail} />
      <h2>Media</h2>
      <JsonBlock value={record.media} label="Media references" absent="No media in this request." />
      <h2>Request payload</h2>
      <JsonBlock value={record.request_payload} label="Request payload as stored" absent="Not stored (payload retention is off, or the request had no body)." />
      <h2>Response payload</h2>
      <JsonBlock value={record.response_payload} label="Response payload as stored" absent="Not stored (payload retention is off, or there was no answer)." />
      {session?.user.role === 'admin' && (
        <>
          <h2>Upstream detail</h2>
          <JsonBlock value={record.detail} label="Upstream status and detail" absent="No upstream detail: the provider answered normally." />
        </>
      )}
    </section>
  );
}
