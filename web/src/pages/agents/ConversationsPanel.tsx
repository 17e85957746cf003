import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { adminApi, ApiError } from '../../api.js';
import { ErrorAlert } from '../../components/ErrorAlert.js';
import { formatTime } from '../../format.js';
import { KeyPicker } from './KeyPicker.js';

/**
 * The published agent's conversations as one key sees them through the API: the key's own
 * conversations only, and none when the key may not run the agent.
 */
export function ConversationsPanel({ slug, projectId }: { slug: string; projectId: string | undefined }) {
  const [keyId, setKeyId] = useState('');
  const [pickerError, setPickerError] = useState<string | null>(null);
  // The conversation shown belongs to the key it was opened as: another key closes it.
  const [opened, setOpened] = useState<{ keyId: string; id: string } | null>(null);
  const openId = opened?.keyId === keyId ? opened.id : null;
  const conversations = useQuery({ queryKey: ['agent', slug, 'conversations', keyId], queryFn: () => adminApi.agents.conversations(slug, keyId), enabled: keyId !== '' });
  const conversation = useQuery({
    queryKey: ['agent', slug, 'conversation', openId, keyId],
    queryFn: () => adminApi.agents.conversation(slug, openId!, keyId),
    enabled: openId !== null,
  });
  const list = conversations.data?.data;
  const open = conversation.data;
  const failure = conversations.error ?? conversation.error;
  const error = pickerError ?? (failure === null ? null : failure instanceof ApiError ? failure.message : String(failure));

  return (
    <section aria-labelledby="conversations-title">
      <h2 id="conversations-title">Conversations</h2>
      <KeyPicker id="conversations-key" label="As the key" agent={{ slug, projectId }} value={keyId} onChange={setKeyId} onError={setPickerError} />
      <ErrorAlert message={error} />
      {list !== undefined && list.length === 0 && <p className="hint">This key has no conversations with the published agent.</p>}
      <ul className="conversation-list">
        {(list ?? []).map((entry) => (
          <li key={entry.id}>
            <button type="button" className="link" aria-pressed={openId === entry.id} onClick={() => setOpened({ keyId, id: entry.id })}>
              {entry.id}
            </button>{' '}
            <span className="hint">
              {entry.message_count} messages · {formatTime(entry.updated_at)}
            </span>
          </li>
        ))}
      </ul>
      {open !== undefined && (
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
