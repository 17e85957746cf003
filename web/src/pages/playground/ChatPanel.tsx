import { useRef, useState, type FormEvent } from 'react';
import { ErrorAlert } from '../../components/ErrorAlert.js';
import { SelectField } from '../../components/SelectField.js';
import { relayChatStream, relayGemini, relayJson, requestIdOf } from './relay.js';
import { firstModelOf, LogLink, messageOf, ModelField, numberOf, OptionalNumber, ShowCode, TextArea, type PanelProps } from './parts.js';
import { geminiSnippetsOf, snippetsOf } from './snippets.js';

/** A file the user attached: an image or a PDF, as the data URI the chat format carries. */
export interface Attachment {
  name: string;
  type: string;
  dataUri: string;
}

interface Turn {
  role: 'user' | 'assistant';
  text: string;
  attachments: readonly Attachment[];
}

const ACCEPTED = 'image/png,image/jpeg,image/gif,image/webp,application/pdf';

function readAsDataUri(file: File): Promise<Attachment> {
  return new Promise((done, failed) => {
    const reader = new FileReader();
    reader.onload = () => done({ name: file.name, type: file.type, dataUri: String(reader.result) });
    reader.onerror = () => failed(reader.error ?? new Error(`Could not read ${file.name}.`));
    reader.readAsDataURL(file);
  });
}

/** A user turn in the chat format: text alone, or parts with each image and PDF. */
function userContent(turn: Turn): unknown {
  if (turn.attachments.length === 0) return turn.text;
  return [
    ...(turn.text === '' ? [] : [{ type: 'text', text: turn.text }]),
    ...turn.attachments.map((attachment) =>
      attachment.type.startsWith('image/')
        ? { type: 'image_url', image_url: { url: attachment.dataUri } }
        : { type: 'file', file: { filename: attachment.name, file_data: attachment.dataUri } },
    ),
  ];
}

/** The chat messages of a conversation: the system prompt, then every turn. */
export function chatMessages(system: string, turns: readonly Turn[]): unknown[] {
  return [
    ...(system.trim() === '' ? [] : [{ role: 'system', content: system }]),
    ...turns.map((turn) => ({ role: turn.role, content: turn.role === 'user' ? userContent(turn) : turn.text })),
  ];
}

/** The same conversation as the Gemini API's `contents`: turns of `user` and `model`, attachments as inlineData parts. */
export function geminiContents(turns: readonly Turn[]): unknown[] {
  return turns.map((turn) => ({
    role: turn.role === 'user' ? 'user' : 'model',
    parts: [
      ...(turn.text === '' ? [] : [{ text: turn.text }]),
      ...turn.attachments.map((attachment) => ({ inlineData: { mimeType: attachment.type, data: attachment.dataUri.slice(attachment.dataUri.indexOf(',') + 1) } })),
    ],
  }));
}

/** The public APIs the chat can be sent through. */
type ChatApi = 'chat' | 'gemini';
const APIS = [
  { value: 'chat', label: 'Chat completions (/v1/chat/completions)' },
  { value: 'gemini', label: 'Gemini API (/v1beta/models/…:generateContent)' },
];

/** File picker for images and PDFs, listing what is attached with a way to remove each. */
export function AttachmentField(props: { id: string; attachments: readonly Attachment[]; onChange: (attachments: Attachment[]) => void; onError: (message: string) => void }) {
  return (
    <div className="field">
      <label htmlFor={props.id}>Attach images or PDFs</label>
      <input
        id={props.id}
        type="file"
        multiple
        accept={ACCEPTED}
        onChange={(event) => {
          const files = [...(event.target.files ?? [])];
          event.target.value = '';
          Promise.all(files.map(readAsDataUri)).then((read) => props.onChange([...props.attachments, ...read]), (error: unknown) => props.onError(messageOf(error)));
        }}
      />
      {props.attachments.length > 0 && (
        <ul className="attachments" aria-label="Attached files">
          {props.attachments.map((attachment, index) => (
            <li key={`${attachment.name}-${index}`}>
              {attachment.type.startsWith('image/') ? <img src={attachment.dataUri} alt="" /> : <span aria-hidden="true">PDF</span>} {attachment.name}{' '}
              <button type="button" className="secondary small" aria-label={`Remove ${attachment.name}`} onClick={() => props.onChange(props.attachments.filter((_, other) => other !== index))}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Chat with any catalog chat model, streamed or whole, with attachments and the usual settings. */
export function ChatPanel({ keyId, models }: PanelProps) {
  const [model, setModel] = useState(() => firstModelOf(models, 'chat', 'gpt-4o-mini'));
  const [system, setSystem] = useState('');
  const [temperature, setTemperature] = useState('');
  const [maxTokens, setMaxTokens] = useState('');
  const [stream, setStream] = useState(true);
  const [api, setApi] = useState<ChatApi>('chat');
  const [turns, setTurns] = useState<Turn[]>([]);
  const [draft, setDraft] = useState('');
  const [attachments, setAttachments] = useState<Attachment[]>([]);
  const [answer, setAnswer] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [requestId, setRequestId] = useState<string | null>(null);
  const [usage, setUsage] = useState<string | null>(null);
  const controller = useRef<AbortController | null>(null);

  const nextTurn: Turn = { role: 'user', text: draft, attachments };
  const hasDraft = draft.trim() !== '' || attachments.length > 0;
  const bodyFor = (conversation: readonly Turn[]): Record<string, unknown> => ({
    model,
    messages: chatMessages(system, conversation),
    ...(numberOf(temperature) !== undefined ? { temperature: numberOf(temperature) } : {}),
    ...(numberOf(maxTokens) !== undefined ? { max_tokens: numberOf(maxTokens) } : {}),
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
  const geminiBodyFor = (conversation: readonly Turn[]): Record<string, unknown> => {
    const generationConfig = {
      ...(numberOf(temperature) !== undefined ? { temperature: numberOf(temperature) } : {}),
      ...(numberOf(maxTokens) !== undefined ? { maxOutputTokens: numberOf(maxTokens) } : {}),
    };
    return {
      contents: geminiContents(conversation),
      ...(system.trim() === '' ? {} : { systemInstruction: { parts: [{ text: system }] } }),
      ...(Object.keys(generationConfig).length > 0 ? { generationConfig } : {}),
    };
  };
  const shownTurns = hasDraft ? [...turns, nextTurn] : turns;
  const snippets = api === 'gemini' ? geminiSnippetsOf(window.location.origin, model, stream, geminiBodyFor(shownTurns)) : snippetsOf(window.location.origin, 'chat/completions', bodyFor(shownTurns));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!hasDraft) return;
    const conversation = [...turns, nextTurn];
    const body = api === 'gemini' ? geminiBodyFor(conversation) : bodyFor(conversation);
    setTurns(conversation);
    setDraft('');
    setAttachments([]);
    setError(null);
    setUsage(null);
    setRequestId(null);
    setBusy(true);
    setAnswer('');
    controller.current = new AbortController();
    let text = '';
    const onText = (piece: string) => {
      text += piece;
      setAnswer(text);
    };
    try {
      if (api === 'gemini') {
        const done = await relayGemini(keyId, model, body, stream ? onText : null, controller.current.signal);
        text = done.value.text;
        setRequestId(done.requestId);
        const usage = done.value.usage;
        if (usage) setUsage(`${usage.promptTokenCount ?? 0} prompt + ${(usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0)} completion tokens`);
      } else if (stream) {
        const done = await relayChatStream(keyId, body, onText, controller.current.signal);
        setRequestId(done.requestId);
        if (done.value) setUsage(`${done.value.prompt_tokens} prompt + ${done.value.completion_tokens} completion tokens`);
      } else {
        const done = await relayJson<{ choices: { message: { content: string | null } }[]; usage?: { prompt_tokens: number; completion_tokens: number } }>(keyId, 'chat/completions', body, controller.current.signal);
        text = done.value.choices[0]?.message.content ?? '';
        setRequestId(done.requestId);
        if (done.value.usage) setUsage(`${done.value.usage.prompt_tokens} prompt + ${done.value.usage.completion_tokens} completion tokens`);
      }
      setTurns([...conversation, { role: 'assistant', text, attachments: [] }]);
    } catch (failure) {
      setError(controller.current.signal.aborted ? 'Stopped.' : messageOf(failure));
      setRequestId(requestIdOf(failure));
      if (text !== '') setTurns([...conversation, { role: 'assistant', text, attachments: [] }]);
      else {
        // Nothing was answered: the message goes back to the box, so the next call does not
        // send it twice in a row (two user turns) and it can be sent again as it is.
        setTurns(turns);
        setDraft(nextTurn.text);
        setAttachments(attachments);
      }
    } finally {
      setAnswer(null);
      setBusy(false);
    }
  };

  return (
    <>
      <div className="panel-grid">
        <form className="settings" onSubmit={(event) => void submit(event)} aria-label="Chat">
          <SelectField id="chat-api" label="API" value={api} options={APIS} onChange={(value) => setApi(value as ChatApi)} />
          <ModelField id="chat-model" models={models} mode="chat" value={model} onChange={setModel} />
          <TextArea id="chat-system" label="System prompt" value={system} onChange={setSystem} />
          <div className="limits">
            <OptionalNumber id="chat-temperature" label="Temperature" value={temperature} onChange={setTemperature} min={0} max={2} step={0.1} />
            <OptionalNumber id="chat-max-tokens" label="Max tokens" value={maxTokens} onChange={setMaxTokens} min={1} />
          </div>
          <label className="check">
            <input type="checkbox" checked={stream} onChange={(event) => setStream(event.target.checked)} /> Stream the answer
          </label>
          <AttachmentField id="chat-files" attachments={attachments} onChange={setAttachments} onError={setError} />
          <TextArea id="chat-message" label="Message" value={draft} onChange={setDraft} rows={4} />
          <div className="row-actions">
            <button type="submit" disabled={busy || keyId === ''}>
              Send
            </button>
            {busy && (
              <button type="button" className="secondary" onClick={() => controller.current?.abort()}>
                Stop
              </button>
            )}
            <button type="button" className="secondary" disabled={busy || turns.length === 0} onClick={() => setTurns([])}>
              Clear conversation
            </button>
          </div>
        </form>
        <section className="transcript" aria-label="Conversation" aria-live="polite" aria-busy={busy}>
          {turns.length === 0 && answer === null && <p className="muted">Send a message to start.</p>}
          {turns.map((turn, index) => (
            <article key={index} className={`turn ${turn.role}`}>
              <h3>{turn.role === 'user' ? 'You' : 'Assistant'}</h3>
              <p>{turn.text}</p>
              {turn.attachments.length > 0 && <p className="muted">Attached: {turn.attachments.map((attachment) => attachment.name).join(', ')}</p>}
            </article>
          ))}
          {answer !== null && (
            <article className="turn assistant" data-streaming="true">
              <h3>Assistant</h3>
              <p>{answer === '' ? '…' : answer}</p>
            </article>
          )}
          <ErrorAlert message={error} />
          {usage !== null && <p className="muted">{usage}</p>}
          <LogLink requestId={requestId} />
        </section>
      </div>
      <ShowCode snippets={snippets} />
    </>
  );
}
