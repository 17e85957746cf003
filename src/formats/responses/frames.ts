/** One server-sent event of the Responses API: its type on the `event:` line, the JSON on the `data:` line. */
export function eventFrame(type: string, data: string): string {
  return `event: ${type}\ndata: ${data}\n\n`;
}
