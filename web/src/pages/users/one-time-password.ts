/**
 * A password for an invited account or a reset, made in the browser from the platform's
 * random source (as `modelgate users create` takes one typed): 20 characters of an alphabet
 * without look-alikes, about 115 bits. It is shown once and never stored by the page.
 */
const ALPHABET = 'abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';

export function oneTimePassword(length = 20): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
  let password = '';
  // Bytes past the largest multiple of the alphabet's size are skipped: every character equally likely.
  const limit = 256 - (256 % ALPHABET.length);
  for (const byte of bytes) {
    if (byte < limit) password += ALPHABET[byte % ALPHABET.length];
    if (password.length === length) return password;
  }
  return password + oneTimePassword(length - password.length);
}
