import type { EventStreamCodec } from '@smithy/eventstream-codec';
import { GatewayError } from '../../errors/index.js';
import type { Framer } from '../shared/sse-stream.js';

/** One message of AWS's binary event stream (`application/vnd.amazon.eventstream`), its headers read. */
export interface AwsEventMessage {
  /** `:message-type`: `event`, `exception` or `error`. */
  messageType: string;
  /** `:event-type` of an event (`contentBlockDelta`, `chunk`, …). */
  eventType: string | undefined;
  /** `:exception-type` of an exception (`throttlingException`, …), or `:error-code` of an error. */
  exceptionType: string | undefined;
  /** The payload as text (JSON for Bedrock). */
  payload: string;
}

/** The prelude: total length, headers length, prelude CRC (4 bytes each). */
const PRELUDE_BYTES = 12;

type DecodedMessage = ReturnType<EventStreamCodec['decode']>;

function headerText(headers: DecodedMessage['headers'], name: string): string | undefined {
  const header = headers[name];
  return header !== undefined && header.type === 'string' ? header.value : undefined;
}

let framing: Promise<Framer<AwsEventMessage>> | undefined;

/**
 * Cuts the bytes into AWS event-stream messages by their length prefix and decodes each with
 * AWS's own codec (which checks both CRCs: a corrupted message fails the stream). The codec
 * loads with the first stream, not with every gateway.
 */
export function awsEventStreamFraming(): Promise<Framer<AwsEventMessage>> {
  framing ??= Promise.all([import('@smithy/eventstream-codec'), import('@smithy/util-utf8')]).then(([{ EventStreamCodec }, { fromUtf8, toUtf8 }]) =>
    framingWith(new EventStreamCodec(toUtf8, fromUtf8)),
  );
  return framing;
}

function framingWith(codec: EventStreamCodec): Framer<AwsEventMessage> {
  return (onMessage) => {
    let pending: Buffer = Buffer.alloc(0);
    return {
      feed(chunk) {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
        while (pending.length >= PRELUDE_BYTES) {
          const total = pending.readUInt32BE(0);
          if (total < PRELUDE_BYTES + 4) throw malformed(`a message length of ${total} bytes`);
          if (pending.length < total) return;
          let decoded: DecodedMessage;
          try {
            decoded = codec.decode(pending.subarray(0, total));
          } catch (error) {
            throw malformed((error as Error).message);
          }
          pending = pending.subarray(total);
          onMessage({
            messageType: headerText(decoded.headers, ':message-type') ?? 'event',
            eventType: headerText(decoded.headers, ':event-type'),
            exceptionType: headerText(decoded.headers, ':exception-type') ?? headerText(decoded.headers, ':error-code'),
            payload: Buffer.from(decoded.body).toString('utf8'),
          });
        }
      },
      end() {
        pending = Buffer.alloc(0);
      },
    };
  };
}

function malformed(reason: string): GatewayError {
  return new GatewayError('provider_error', 'The model provider sent a stream the gateway could not read. Try again later.', {
    logDetail: { provider: 'bedrock', reason: `event stream: ${reason}` },
  });
}
