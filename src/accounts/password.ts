import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Dashboard passwords are hashed with scrypt (node:crypto), a memory-hard KDF: N = 2^15,
 * r = 8, p = 1 takes 32 MiB and a noticeable fraction of a second per hash, so a stolen table costs an attacker
 * the same per guess. The stored form names its parameters, so they can be raised later
 * without breaking existing hashes: `scrypt$<log2 N>$<r>$<p>$<salt>$<hash>` (base64url).
 */

const LOG2_N = 15;
const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const SALT_BYTES = 16;
const HASH_BYTES = 32;

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 1024;

/**
 * Hashes computed at once, at most: scrypt runs on libuv's thread pool (4 threads), which DNS
 * look-ups and file reads share, so a flood of sign-ins must never hold all of it. The rest
 * wait their turn here, in order.
 */
export const CONCURRENT_HASHES = 2;
let running = 0;
const waiting: (() => void)[] = [];

async function turn<T>(work: () => Promise<T>): Promise<T> {
  if (running >= CONCURRENT_HASHES) await new Promise<void>((resolve) => waiting.push(resolve));
  else running += 1;
  try {
    return await work();
  } finally {
    // The slot passes to the next in line, or is given back.
    const next = waiting.shift();
    if (next === undefined) running -= 1;
    else next();
  }
}

/** Hashes waiting for a turn now (a sign-in flood shows here). */
export function hashesWaiting(): number {
  return waiting.length;
}

function derive(password: string, salt: Buffer, logN: number, r: number, p: number): Promise<Buffer> {
  // scrypt needs 128 * N * r bytes; the default ceiling (32 MiB) is exactly that, and Node refuses equality.
  const options: ScryptOptions = { N: 2 ** logN, r, p, maxmem: 256 * 2 ** logN * r };
  return turn(
    () =>
      new Promise((resolve, reject) => {
        scrypt(password.normalize('NFC'), salt, HASH_BYTES, options, (error, key) => (error === null ? resolve(key) : reject(error)));
      }),
  );
}

/** Why a password cannot be used, or undefined when it can. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < PASSWORD_MIN_LENGTH) return `must be at least ${PASSWORD_MIN_LENGTH} characters long`;
  if (password.length > PASSWORD_MAX_LENGTH) return `must be at most ${PASSWORD_MAX_LENGTH} characters long`;
  return undefined;
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, LOG2_N, BLOCK_SIZE, PARALLELISM);
  return ['scrypt', LOG2_N, BLOCK_SIZE, PARALLELISM, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** Compares in constant time; a stored value this code did not write never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [algorithm, logN, r, p, salt, hash] = stored.split('$');
  if (algorithm !== 'scrypt' || salt === undefined || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), Number(logN), Number(r), Number(p));
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * A hash of a random password, checked against when the email is unknown: the answer then
 * takes as long as a wrong password for a real account, so timing does not tell which
 * emails have accounts.
 */
let decoyHash: Promise<string> | undefined;
export function decoyPasswordHash(): Promise<string> {
  decoyHash ??= hashPassword(randomBytes(18).toString('base64url'));
  return decoyHash;
}
