import { useEffect, useState } from 'react';
import { adminApi, ApiError, type AgentConversation, type AgentConversationMessage } from '../../api.js';
import { ErrorAlert } from '../../components/ErrorAlert.js';
import { formatTime } from '../../format.js';
import { KeyPicker } from './KeyPicker.js';

/**
 * The published agent's conversations as one key sees them through the API: the key's own
 * conversations only, and none when the key may not run the agent.
 */
export function ConversationsPanel({ slug, projectId }: { slug: string; projectId: string | undefined }) {
  const [keyId, setKeyId] = useState('');
  const [list, setList] = useState<AgentConversation[] | null>(null);
  const [open, setOpen] = useState<{ id: string; messages: AgentConversationMessage[] } | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (keyId === '') return;
    setOpen(null);
    setError(null);
    adminApi.agents
      .conversations(slug, keyId)
      .then((page) => setList(page.data))
      .catch((failure: unknown) => {
        setList(null);
        setError(failure instanceof ApiError ? failure.message : String(failure));
      });
  }, [slug, keyId]);

  const show = (id: string) => {
    adminApi.agents
      .conversation(slug, id, keyId)
      .then(setOpen)
      .catch((failure: unknown) => setError(failure instanceof ApiError ? failure.message : String(failure)));
  };

  return (
    <section aria-labelledby="conversations-title">
      <h2 id="conversations-title">Conversations</h2>
      <KeyPicker id="conversations-key" label="As the key" agent={{ slug, projectId }} value={keyId} onChange={setKeyId} onError={setError} />
      <ErrorAlert message={error} />
      {list !== null && list.length === 0 && <p className="hint">This key has no conversations with the published agent.</p>}
      <ul className="conversation-list">
        {(list ?? []).map((conversation) => (
          <li key={conversation.id}>
            <button type="button" className="link" aria-pressed={open?.id === conversation.id} onClick={() => show(conversation.id)}>
              {conversation.id}
            </button>{' '}
            <span className="hint">
              {conversation.message_count} messages · {formatTime(conversation.updated_at)}
            </span>
          </li>
        ))}
      </ul>
      {open !== null && (
        <ol className="turns" aria-label={`Conversation ${open.id}`}>
          {open.messages.map((message, index) => (
            <li key={index}>
              <span className="muted">{message.role === 'user' ? 'caller' : 'agent'}:</span> {message.text}
              {message.asset_ids.map((assetId) => (
                <img key={assetId} className="trace-image" src={`/admin/v1/agent-assets/${encodeURIComponent(assetId)}`} alt={`image ${assetId}`} />
              ))}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
