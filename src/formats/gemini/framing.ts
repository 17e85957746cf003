/**
 * How a streamGenerateContent answer is framed: with `?alt=sse` one server-sent event per
 * GenerateContentResponse (`data: {…}` and a blank line, as Google writes them); without it
 * Google's streamed JSON array, `[{…}` then `,\r\n{…}` per response and `]` at the end.
 */
export class StreamFraming {
  private frames = 0;

  constructor(readonly sse: boolean) {}

  /** One response's JSON text as its frame. */
  frame(json: string): string {
    if (this.sse) return `data: ${json}\r\n\r\n`;
    return `${this.frames++ === 0 ? '[' : ',\r\n'}${json}`;
  }

  /** What closes a stream: nothing for events, the array's bracket (an empty array when nothing was sent). */
  close(): string {
    if (this.sse) return '';
    return this.frames === 0 ? '[]' : ']';
  }

  /** The content type of the stream's response. */
  get contentType(): string {
    return this.sse ? 'text/event-stream; charset=utf-8' : 'application/json; charset=utf-8';
  }
}
