import { useEffect, useState, type ReactNode } from 'react';
import type { PlaygroundEndpoint } from '@modelgate/admin-api';
import { ErrorAlert } from '../../components/ErrorAlert.js';
import { SelectField } from '../../components/SelectField.js';
import { relayBytes, relayJson } from './relay.js';
import { firstModelOf, LogLink, ModelField, ShowCode, TextArea, useCall, type PanelProps } from './parts.js';
import { snippetsOf } from './snippets.js';

/**
 * Embeddings, image generation and speech: one model, one input, one call each. The form,
 * the call and its outcome follow one pattern (`OneCallForm`).
 */

function OneCallForm<T>(props: {
  label: string;
  endpoint: PlaygroundEndpoint;
  keyId: string;
  body: Record<string, unknown>;
  ready: boolean;
  call: () => Promise<{ value: T; requestId: string | null }>;
  show: (value: T) => ReactNode;
  children: ReactNode;
}) {
  const { result, busy, error, failedRequestId, submitWith } = useCall<{ value: T; requestId: string | null }>();
  return (
    <>
      <div className="panel-grid">
        <form className="settings" onSubmit={submitWith(props.call)} aria-label={props.label}>
          {props.children}
          <div className="row-actions">
            <button type="submit" disabled={busy || props.keyId === '' || !props.ready}>
              {busy ? 'Working…' : props.label}
            </button>
          </div>
        </form>
        <section className="results" aria-label={`${props.label}: result`} aria-busy={busy}>
          <ErrorAlert message={error} />
          <LogLink requestId={failedRequestId} />
          {result !== null && (
            <>
              {props.show(result.value)}
              <LogLink requestId={result.requestId} />
            </>
          )}
        </section>
      </div>
      <ShowCode snippets={snippetsOf(window.location.origin, props.endpoint, props.body)} />
    </>
  );
}

interface EmbeddingList {
  data: { embedding: number[] }[];
  usage?: { prompt_tokens: number };
}

export function EmbeddingsPanel({ keyId, models }: PanelProps) {
  const [model, setModel] = useState(() => firstModelOf(models, 'embedding'));
  const [input, setInput] = useState('');
  const body = { model, input };
  return (
    <OneCallForm<EmbeddingList>
      label="Embed"
      endpoint="embeddings"
      keyId={keyId}
      body={body}
      ready={input.trim() !== ''}
      call={() => relayJson<EmbeddingList>(keyId, 'embeddings', body)}
      show={(list) => {
        const vector = list.data[0]?.embedding ?? [];
        return (
          <>
            <p data-testid="embedding-dimensions">
              {vector.length} dimensions{list.usage !== undefined ? `, ${list.usage.prompt_tokens} tokens` : ''}
            </p>
            <pre aria-label="First values">[{vector.slice(0, 8).map((value) => value.toFixed(5)).join(', ')}{vector.length > 8 ? ', …' : ''}]</pre>
          </>
        );
      }}
    >
      <ModelField id="embeddings-model" models={models} mode="embedding" value={model} onChange={setModel} />
      <TextArea id="embeddings-input" label="Text" value={input} onChange={setInput} rows={4} />
    </OneCallForm>
  );
}

interface ImageList {
  data: { b64_json?: string; url?: string; revised_prompt?: string }[];
}

const SIZES = ['1024x1024', '1024x1536', '1536x1024'].map((size) => ({ value: size, label: size }));

export function ImagesPanel({ keyId, models }: PanelProps) {
  const [model, setModel] = useState(() => firstModelOf(models, 'image_generation'));
  const [prompt, setPrompt] = useState('');
  const [size, setSize] = useState('1024x1024');
  const body = { model, prompt, size, n: 1 };
  return (
    <OneCallForm<ImageList>
      label="Generate"
      endpoint="images/generations"
      keyId={keyId}
      body={body}
      ready={prompt.trim() !== ''}
      call={() => relayJson<ImageList>(keyId, 'images/generations', body)}
      show={(list) =>
        list.data.map((image, index) =>
          image.b64_json !== undefined ? (
            <figure key={index} className="generated">
              <img src={`data:image/png;base64,${image.b64_json}`} alt={image.revised_prompt ?? prompt} />
              {image.revised_prompt !== undefined && <figcaption>{image.revised_prompt}</figcaption>}
            </figure>
          ) : (
            <p key={index}>
              The provider answered with a link: <a href={image.url}>{image.url}</a>
            </p>
          ),
        )
      }
    >
      <ModelField id="images-model" models={models} mode="image_generation" value={model} onChange={setModel} />
      <TextArea id="images-prompt" label="Prompt" value={prompt} onChange={setPrompt} rows={4} />
      <SelectField id="images-size" label="Size" value={size} options={SIZES} onChange={setSize} />
    </OneCallForm>
  );
}

const VOICES = ['alloy', 'ash', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer'].map((voice) => ({ value: voice, label: voice }));

/** An audio player of bytes the gateway returned; its object URL is released when it goes. */
function AudioPlayer(props: { audio: Blob }) {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    const made = URL.createObjectURL(props.audio);
    setUrl(made);
    return () => URL.revokeObjectURL(made);
  }, [props.audio]);
  return url === null ? null : (
    <>
        <audio controls src={url} aria-label="Generated speech" />
        <p className="muted">
          {props.audio.type || 'audio'}, {props.audio.size} bytes
        </p>
    </>
  );
}

export function SpeechPanel({ keyId, models }: PanelProps) {
  const [model, setModel] = useState(() => firstModelOf(models, 'audio_speech'));
  const [input, setInput] = useState('');
  const [voice, setVoice] = useState('alloy');
  const body = { model, input, voice };
  return (
    <OneCallForm<Blob> label="Speak" endpoint="audio/speech" keyId={keyId} body={body} ready={input.trim() !== ''} call={() => relayBytes(keyId, 'audio/speech', body)} show={(audio) => <AudioPlayer audio={audio} />}>
      <ModelField id="speech-model" models={models} mode="audio_speech" value={model} onChange={setModel} />
      <TextArea id="speech-input" label="Text" value={input} onChange={setInput} rows={4} />
      <SelectField id="speech-voice" label="Voice" value={voice} options={VOICES} onChange={setVoice} />
    </OneCallForm>
  );
}
