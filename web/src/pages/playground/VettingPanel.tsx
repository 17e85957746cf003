import { useState } from 'react';
import type { AttemptView, FullVettingReply, PlaygroundVettingReply } from '@modelgate/admin-api';
import { ErrorAlert } from '../../components/ErrorAlert.js';
import { relayJson } from './relay.js';
import { firstModelOf, LogLink, ModelField, numberOf, OptionalNumber, ShowCode, TextArea, useCall, type PanelProps } from './parts.js';
import { snippetsOf } from './snippets.js';

type Endpoint = 'chat/vetting' | 'vetting/full';

/** What either endpoint answered, in one shape for the page. */
interface Outcome {
  content: string;
  stopReason: string;
  attempts: readonly AttemptView[];
  requestId: string | null;
}

/** The verifier's reason, read from its raw output (a verdict object); null when it gave none. */
function reasonOf(attempt: AttemptView): string | null {
  if (attempt.checkedBy === 'local_check') return 'The draft stated a protected answer or key concept (local check, no verification call).';
  if (attempt.verificationOutput === null) return null;
  try {
    const verdict = JSON.parse(attempt.verificationOutput) as { reason?: unknown };
    return typeof verdict.reason === 'string' ? verdict.reason : attempt.verificationOutput;
  } catch {
    return attempt.verificationOutput;
  }
}

/** Every attempt side by side: the draft, the verdict and its reason. */
function Attempts(props: { attempts: readonly AttemptView[] }) {
  return (
    <ol className="attempts" aria-label="Attempts">
      {props.attempts.map((attempt, index) => (
        <li key={index} className={attempt.verificationPassed ? 'attempt passed' : 'attempt rejected'}>
          <h3>Attempt {index + 1}</h3>
          <p className={`badge ${attempt.verificationPassed ? 'active' : 'revoked'}`}>{attempt.verificationPassed ? 'passed' : 'rejected'}</p>
          {attempt.requiresAttention && <p className="badge paused">requires attention</p>}
          <h4>Draft</h4>
          <p className="draft">{attempt.chatResponse === '' ? '(no draft)' : attempt.chatResponse}</p>
          <h4>Reason</h4>
          <p className="reason">{reasonOf(attempt) ?? '—'}</p>
        </li>
      ))}
    </ol>
  );
}

/** Both VETTING endpoints, with every attempt of the loop shown (drafts included: this is the operator's view). */
export function VettingPanel({ keyId, models }: PanelProps) {
  const [endpoint, setEndpoint] = useState<Endpoint>('chat/vetting');
  const [model, setModel] = useState(() => firstModelOf(models, 'chat', 'gpt-4o-mini'));
  const [verificationModel, setVerificationModel] = useState(() => firstModelOf(models, 'chat', 'gpt-4o-mini'));
  const [system, setSystem] = useState('You are a maths tutor. Guide the student; never give the answer.');
  const [rules, setRules] = useState('');
  const [guideline, setGuideline] = useState('');
  const [question, setQuestion] = useState('');
  const [correctAnswer, setCorrectAnswer] = useState('');
  const [keyConcepts, setKeyConcepts] = useState('');
  const [message, setMessage] = useState('');
  const [temperature, setTemperature] = useState('');
  const [maxTokens, setMaxTokens] = useState('');
  const [maxAttempts, setMaxAttempts] = useState('');
  const { result: outcome, busy, error, failedRequestId, submitWith } = useCall<Outcome>();

  const optional = (name: string, value: string | number | undefined) => (value === undefined || value === '' ? {} : { [name]: value });
  const user = { role: 'user', content: message };
  const body: Record<string, unknown> =
    endpoint === 'chat/vetting'
      ? {
          model,
          messages: [...(system.trim() === '' ? [] : [{ role: 'system', content: system }]), user],
          ...optional('temperature', numberOf(temperature)),
          ...optional('max_tokens', numberOf(maxTokens)),
          vettingConfig: { ...optional('systemPrompt', rules), ...optional('guideline', guideline), ...optional('maxAttempts', numberOf(maxAttempts)) },
        }
      : {
          mode: 'vetting',
          config: {
            chatModel: { modelId: model, ...optional('temperature', numberOf(temperature)), ...optional('maxTokens', numberOf(maxTokens)) },
            verificationModel: { modelId: verificationModel },
            ...optional('maxVerificationAttempts', numberOf(maxAttempts)),
          },
          prompts: optional('chatSystemPrompt', system),
          context: {
            items: [
              {
                ...(question === '' ? {} : { question: { text: question } }),
                answerKey: {
                  ...optional('correctAnswer', correctAnswer),
                  keyConcepts: keyConcepts.split(',').map((concept) => concept.trim()).filter((concept) => concept !== ''),
                },
              },
            ],
          },
          messages: [user],
        };

  const run = async (): Promise<Outcome> => {
    if (endpoint === 'chat/vetting') {
      const { value, requestId } = await relayJson<PlaygroundVettingReply>(keyId, endpoint, body);
      return { content: value.choices[0]?.message.content ?? '', stopReason: value.vetting_info.stopReason, attempts: value.vetting_info.attempts, requestId };
    }
    const { value, requestId } = await relayJson<FullVettingReply>(keyId, endpoint, body);
    return { content: value.result.content, stopReason: value.verification?.stopReason ?? 'no verification', attempts: value.verification?.attempts ?? [], requestId };
  };

  return (
    <>
      <div className="panel-grid">
        <form className="settings" onSubmit={submitWith(run)} aria-label="VETTING">
          <fieldset>
            <legend>Endpoint</legend>
            <label className="check">
              <input type="radio" name="vetting-endpoint" checked={endpoint === 'chat/vetting'} onChange={() => setEndpoint('chat/vetting')} /> Lightweight (/v1/chat/vetting)
            </label>
            <label className="check">
              <input type="radio" name="vetting-endpoint" checked={endpoint === 'vetting/full'} onChange={() => setEndpoint('vetting/full')} /> Answer key (/v1/vetting/full)
            </label>
          </fieldset>
          <ModelField id="vetting-model" label="Drafting model" models={models} mode="chat" value={model} onChange={setModel} />
          {endpoint === 'vetting/full' && <ModelField id="vetting-verifier" label="Verification model" models={models} mode="chat" value={verificationModel} onChange={setVerificationModel} />}
          <TextArea id="vetting-system" label="System prompt" value={system} onChange={setSystem} />
          {endpoint === 'chat/vetting' ? (
            <>
              <TextArea id="vetting-rules" label="Verifier rules (vettingConfig.systemPrompt)" value={rules} onChange={setRules} rows={2} />
              <TextArea id="vetting-guideline" label="Guideline" value={guideline} onChange={setGuideline} rows={2} />
            </>
          ) : (
            <>
              <TextArea id="vetting-question" label="Question" value={question} onChange={setQuestion} rows={2} />
              <div className="field">
                <label htmlFor="vetting-answer">Correct answer</label>
                <input id="vetting-answer" value={correctAnswer} onChange={(event) => setCorrectAnswer(event.target.value)} />
              </div>
              <div className="field">
                <label htmlFor="vetting-concepts">Key concepts (comma-separated)</label>
                <input id="vetting-concepts" value={keyConcepts} onChange={(event) => setKeyConcepts(event.target.value)} />
              </div>
            </>
          )}
          <div className="limits">
            <OptionalNumber id="vetting-temperature" label="Temperature" value={temperature} onChange={setTemperature} min={0} max={2} step={0.1} />
            <OptionalNumber id="vetting-max-tokens" label="Max tokens" value={maxTokens} onChange={setMaxTokens} min={1} />
            <OptionalNumber id="vetting-attempts" label="Max attempts" value={maxAttempts} onChange={setMaxAttempts} min={1} />
          </div>
          <TextArea id="vetting-message" label="Student message" value={message} onChange={setMessage} rows={3} />
          <div className="row-actions">
            <button type="submit" disabled={busy || keyId === '' || message.trim() === ''}>
              {busy ? 'Running…' : 'Run VETTING'}
            </button>
          </div>
        </form>
        <section className="results" aria-label="VETTING result" aria-busy={busy}>
          <ErrorAlert message={error} />
          <LogLink requestId={failedRequestId} />
          {outcome === null && error === null && <p className="muted">Run the loop to see each attempt: its draft, the verdict and the reason.</p>}
          {outcome !== null && (
            <>
              <h2>Reply to the student</h2>
              <p className="final-reply">{outcome.content}</p>
              <p>
                Stop reason: <code>{outcome.stopReason}</code> after {outcome.attempts.length} attempt{outcome.attempts.length === 1 ? '' : 's'}
              </p>
              <Attempts attempts={outcome.attempts} />
              <LogLink requestId={outcome.requestId} />
            </>
          )}
        </section>
      </div>
      <ShowCode snippets={snippetsOf(window.location.origin, endpoint, body)} />
    </>
  );
}
