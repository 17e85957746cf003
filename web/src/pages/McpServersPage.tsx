import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { McpServerView, NewMcpServerInput } from '@modelgate/admin-api';
import { adminApi, ApiError } from '../api.js';
import { ConfirmButton } from '../components/ConfirmButton.js';
import { ErrorAlert } from '../components/ErrorAlert';
import { SelectField } from '../components/SelectField';

/**
 * The MCP gateway's upstream servers (docs/mcp.md): how each is reached, whether it answers,
 * and a form to add one. Credentials are names of environment variables of the gateway: the
 * page never holds a secret.
 */

const MCP_SERVERS = ['mcp-servers'] as const;
const messageOf = (failure: unknown) => (failure instanceof ApiError ? failure.message : String(failure));

function stateText(server: McpServerView): string {
  if (server.state === 'ready') return 'ok';
  if (server.state === 'connecting') return 'connecting';
  return `unavailable since ${new Date(server.since).toLocaleString()}${server.reason === null ? '' : `: ${server.reason}`}`;
}

function useRefreshServers() {
  const client = useQueryClient();
  return () => client.invalidateQueries({ queryKey: MCP_SERVERS });
}

function AddServerForm() {
  const refresh = useRefreshServers();
  const [transport, setTransport] = useState<'http' | 'stdio'>('http');
  const [name, setName] = useState('');
  const [target, setTarget] = useState('');
  const [tokenEnv, setTokenEnv] = useState('');
  const [timeout, setTimeout] = useState('30000');
  const add = useMutation({
    mutationFn: (input: NewMcpServerInput) => adminApi.mcpServers.add(input),
    onSuccess: () => {
      setName('');
      setTarget('');
      setTokenEnv('');
      return refresh();
    },
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    add.mutate({
      name: name.trim(),
      ...(transport === 'http' ? { url: target.trim() } : { command: target.trim().split(/\s+/).filter((part) => part.length > 0) }),
      ...(tokenEnv.trim() !== '' ? { tokenEnv: tokenEnv.trim() } : {}),
      timeoutMs: Number(timeout),
    });
  };

  return (
    <form className="filters" aria-labelledby="mcp-add-title" onSubmit={submit}>
      <h2 id="mcp-add-title">Add a server</h2>
      <div className="field">
        <label htmlFor="mcp-name">Name</label>
        <input id="mcp-name" required pattern="[a-z0-9_\-]+" value={name} onChange={(event) => setName(event.target.value)} aria-describedby="mcp-name-help" />
        <small id="mcp-name-help" className="muted">
          lowercase; tools are named name__tool
        </small>
      </div>
      <SelectField
        id="mcp-transport"
        label="Transport"
        value={transport}
        options={[
          { value: 'http', label: 'Streamable HTTP' },
          { value: 'stdio', label: 'stdio command' },
        ]}
        onChange={(value) => setTransport(value === 'stdio' ? 'stdio' : 'http')}
      />
      <div className="field">
        <label htmlFor="mcp-target">{transport === 'http' ? 'URL' : 'Command'}</label>
        <input id="mcp-target" required value={target} placeholder={transport === 'http' ? 'https://tools.internal/mcp' : 'node server.js'} onChange={(event) => setTarget(event.target.value)} />
      </div>
      {transport === 'http' && (
        <div className="field">
          <label htmlFor="mcp-token-env">Token variable</label>
          <input id="mcp-token-env" value={tokenEnv} placeholder="FILES_MCP_TOKEN" onChange={(event) => setTokenEnv(event.target.value)} aria-describedby="mcp-token-help" />
          <small id="mcp-token-help" className="muted">
            the gateway&apos;s environment variable holding the bearer token (optional)
          </small>
        </div>
      )}
      <div className="field">
        <label htmlFor="mcp-timeout">Timeout (ms)</label>
        <input id="mcp-timeout" type="number" min={1} value={timeout} onChange={(event) => setTimeout(event.target.value)} />
      </div>
      <div className="field actions">
        <button type="submit" disabled={add.isPending}>
          Add server
        </button>
      </div>
      <ErrorAlert message={add.error === null ? null : messageOf(add.error)} />
    </form>
  );
}

export function McpServersPage() {
  const list = useQuery({ queryKey: MCP_SERVERS, queryFn: adminApi.mcpServers.list });
  const servers = list.data?.data;
  const refresh = useRefreshServers();
  // Read again after a refusal too: a server already removed elsewhere leaves the list.
  const remove = useMutation({ mutationFn: (name: string) => adminApi.mcpServers.remove(name), onSettled: refresh });
  const failure = list.error ?? remove.error;

  return (
    <section aria-labelledby="mcp-title">
      <div className="page-head">
        <h1 id="mcp-title">MCP servers</h1>
        <button type="button" className="secondary" onClick={() => void list.refetch()}>
          Refresh
        </button>
      </div>
      <p className="muted">
        Keys with the scope <code>mcp:use</code> reach these servers&apos; tools at <code>/mcp</code>, named <code>server__tool</code>, within their allowed tools.
      </p>
      <ErrorAlert message={failure === null ? null : messageOf(failure)} />
      <table>
        <caption>Upstream MCP servers</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Reached at</th>
            <th scope="col">Credential</th>
            <th scope="col">State</th>
            <th scope="col">From</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {servers?.length === 0 && (
            <tr>
              <td colSpan={6}>No MCP servers yet.</td>
            </tr>
          )}
          {servers?.map((server) => (
            <tr key={server.name}>
              <td>
                <code>{server.name}</code>
              </td>
              <td>
                <code>{server.url ?? server.command?.join(' ')}</code>
              </td>
              <td>{server.auth === 'none' ? (server.header_names.length > 0 ? `headers: ${server.header_names.join(', ')}` : 'none') : server.auth}</td>
              <td>
                <span className={`badge ${server.state === 'ready' ? 'active' : server.state === 'unavailable' ? 'revoked' : 'paused'}`}>{stateText(server)}</span>
              </td>
              <td>{server.source === 'config' ? 'config file' : 'dashboard'}</td>
              <td>
                {server.source === 'admin' && (
                  <ConfirmButton
                    label={`Remove ${server.name}`}
                    title={`Remove the MCP server ${server.name}?`}
                    description="Keys lose its tools at once; open sessions are told their tool list changed."
                    confirmLabel="Remove"
                    danger
                    // A refusal is shown above the table; the confirmation closes either way.
                    onConfirm={() => remove.mutateAsync(server.name).catch(() => undefined)}
                  />
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <AddServerForm />
    </section>
  );
}
