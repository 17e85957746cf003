/** A base64 data URI taken apart: its media type (lower case) and its still-encoded data. */
export interface Base64DataUri {
  mimeType: string;
  base64: string;
}

/** `data:<media type>[;params];base64,<data>`; null when the string is not a base64 data URI. */
export function parseBase64DataUri(value: string): Base64DataUri | null {
  const match = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s.exec(value);
  if (match === null || !match[2]!.split(';').includes('base64')) return null;
  return { mimeType: match[1]!.trim().toLowerCase(), base64: match[3]! };
}
