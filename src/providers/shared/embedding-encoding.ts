/** OpenAI's `encoding_format: base64` (the openai SDKs' default): the vector as little-endian float32 bytes. */
export function float32Base64(values: readonly number[]): string {
  const floats = new Float32Array(values);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString('base64');
}
