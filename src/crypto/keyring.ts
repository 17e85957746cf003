import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { GatewayError } from '../errors/index.js';

/**
 * `enc::` values: AES-256-GCM, tagged with the id of the key that sealed them so the key can
 * rotate. Layout: `enc::v2.<keyId>.<base64url(iv ‖ ciphertext ‖ tag)>`. The associated data
 * is the header (`enc::v2.<keyId>`) and the project of the key that encrypted, so no part can
 * be altered and a key of another project cannot open the value (docs/security.md).
 *
 * Version 1 values (made before values were bound to a project) carry only the header as
 * associated data: they still open for a key of any project, until they are encrypted again
 * or the key that sealed them leaves the keyring (docs/security.md).
 */
export const ENCRYPTED_PREFIX = 'enc::';
const VERSION = 'v2';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const VALUE_PATTERN = /^enc::(v[12])\.([0-9a-f]{8})\.([A-Za-z0-9_-]+)$/;

/** First 8 hex digits of the key's SHA-256: names the key in values without revealing it. */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

export function isEncryptedValue(value: string): boolean {
  return value.startsWith(ENCRYPTED_PREFIX);
}

interface Key {
  id: string;
  secret: Buffer;
}

/** A keyring bound to one project: what a caller's request may seal and open. */
export interface ProjectKeyring {
  encrypt(text: string): string;
  decrypt(value: string, field: string): string;
}

/** The current key (encrypts and decrypts) and earlier keys (decrypt only). */
export class Keyring {
  private readonly current: Key;
  private readonly all: readonly Key[];

  constructor(currentKey: Buffer, previousKeys: readonly Buffer[] = []) {
    for (const key of [currentKey, ...previousKeys]) {
      if (key.length !== 32) throw new Error('encryption keys must be 32 bytes');
    }
    this.current = { id: keyIdOf(currentKey), secret: currentKey };
    this.all = [this.current, ...previousKeys.map((secret) => ({ id: keyIdOf(secret), secret }))];
  }

  get currentKeyId(): string {
    return this.current.id;
  }

  forProject(projectId: string): ProjectKeyring {
    return { encrypt: (text) => this.encrypt(text, projectId), decrypt: (value, field) => this.decrypt(value, field, projectId) };
  }

  /** Seals `text` for `projectId`: only a key of that project can open it again. */
  encrypt(text: string, projectId: string): string {
    const header = `${ENCRYPTED_PREFIX}${VERSION}.${this.current.id}`;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.secret, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(associatedData(header, projectId));
    const sealed = Buffer.concat([iv, cipher.update(text, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${header}.${sealed.toString('base64url')}`;
  }

  /**
   * Opens an `enc::` value for a caller of `projectId`. Anything this gateway cannot open
   * (malformed, altered, sealed with a key it does not hold, sealed for another project) is
   * the caller's mistake: one and the same 400 naming `field`, never a 500.
   */
  decrypt(value: string, field: string, projectId: string): string {
    const match = VALUE_PATTERN.exec(value);
    const sealed = match === null ? undefined : Buffer.from(match[3]!, 'base64url');
    // Only the canonical encoding counts: a changed padding bit must not slip through unnoticed.
    const wellFormed = sealed !== undefined && sealed.length >= IV_BYTES + TAG_BYTES && sealed.toString('base64url') === match?.[3];
    if (match === null || sealed === undefined || !wellFormed) {
      throw new GatewayError(
        'invalid_body',
        `${field} is not a well-formed enc:: value. Send the encryptedText exactly as POST /v1/utils/encrypt returned it.`,
        { param: field },
      );
    }
    const [, version, keyId] = match;
    const header = `${ENCRYPTED_PREFIX}${version}.${keyId}`;
    const aad = version === VERSION ? associatedData(header, projectId) : Buffer.from(header, 'utf8');
    const iv = sealed.subarray(0, IV_BYTES);
    const tag = sealed.subarray(sealed.length - TAG_BYTES);
    const ciphertext = sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES);
    // Ids are short, so two keys could share one: try each key that carries it.
    for (const key of this.all.filter((candidate) => candidate.id === keyId)) {
      const text = open(key.secret, aad, iv, ciphertext, tag);
      if (text !== undefined) return text;
    }
    throw new GatewayError(
      'invalid_body',
      `${field} could not be decrypted: it was altered, encrypted by a gateway with a different key, or encrypted with a key of another project. Encrypt the text again with POST /v1/utils/encrypt, using a key of this project.`,
      { param: field },
    );
  }
}

/** The header and the project, in an encoding no two pairs share. */
function associatedData(header: string, projectId: string): Buffer {
  return Buffer.from(JSON.stringify([header, projectId]), 'utf8');
}

function open(secret: Buffer, aad: Buffer, iv: Buffer, ciphertext: Buffer, tag: Buffer): string | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', secret, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(aad);
    decipher.setAuthTag(tag);
    const plain = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
    return new TextDecoder('utf-8', { fatal: true }).decode(plain);
  } catch {
    return undefined;
  }
}
