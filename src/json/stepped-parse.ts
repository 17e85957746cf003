import { CLOSE_ARRAY, CLOSE_OBJECT, COLON, COMMA, endOfString, isWhitespace, OPEN_ARRAY, OPEN_OBJECT, QUOTE, skipWhitespace } from './bytes.js';
import { MAX_JSON_DEPTH } from './depth.js';
import { rememberTopLevelMembers, type JsonMember } from './members.js';
import { parseJsonBytes, type ParsedJson } from './parse-bytes.js';
import { holdsPoisonKey, isPoisoned, maySpellPoisonKey } from './poison.js';

/**
 * A JSON object's bytes parsed in steps, so that a body of many megabytes never holds the
 * event loop for one JSON.parse of all of it: a scan finds the object's members and, in a
 * member that is an array, its elements (checking the nesting depth on the way); then runs of
 * members or elements of about `parseBytesPerStep` are parsed one at a time and put together.
 * The caller runs one step per turn (the generator yields between them).
 *
 * The verdict is JSON.parse's: the glue between the pieces (braces, brackets, colons, commas,
 * whitespace) is checked strictly by the scan and every piece by JSON.parse, so the pieces
 * parse only when the whole would, into the same value (keys in the same order, a repeated key
 * keeping its first place and its last value, `__proto__` an own key). Text the scan cannot
 * lay out so (not an object, a stray byte, an unclosed string) answers `not_laid_out`, and
 * the caller parses it whole; a piece JSON.parse refuses throws its SyntaxError.
 */

export type SteppedParse =
  | { kind: 'parsed'; value: Record<string, unknown>; /** Holds a key that poisons prototypes (see holdsPoisonKey). */ poisoned: boolean }
  | { kind: 'too_deep' }
  | { kind: 'not_laid_out' };

export interface StepBudget {
  /** Bytes the scan covers between two yields (it skips strings natively, so it is fast). */
  scanBytesPerStep: number;
  /** Bytes of text JSON.parse reads between two yields. */
  parseBytesPerStep: number;
}

const DEFAULT_BUDGET: StepBudget = { scanBytesPerStep: 4 * 1024 * 1024, parseBytesPerStep: 1024 * 1024 };

/** Answers of endOfNestedValue that are not a position. */
const UNTERMINATED = -1;
const TOO_DEEP = -2;

/**
 * Position just past the value that starts at `start`, inside containers `depth` deep; TOO_DEEP
 * when it nests past MAX_JSON_DEPTH, UNTERMINATED when no value ends there. Brackets are
 * counted alike, as nestsDeeperThan does: a mismatched pair is JSON.parse's to refuse.
 */
function endOfNestedValue(bytes: Buffer, start: number, depth: number): number {
  const first = bytes[start];
  if (first === QUOTE) return endOfString(bytes, start);
  if (first === OPEN_OBJECT || first === OPEN_ARRAY) {
    let level = depth;
    for (let index = start; index < bytes.length; index += 1) {
      const byte = bytes[index];
      if (byte === QUOTE) {
        const end = endOfString(bytes, index);
        if (end < 0) return UNTERMINATED;
        index = end - 1;
      } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
        level += 1;
        if (level > MAX_JSON_DEPTH) return TOO_DEEP;
      } else if ((byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) && --level === depth) {
        return index + 1;
      }
    }
    return UNTERMINATED;
  }
  // A number, true, false or null: JSON.parse checks which, here only where it ends.
  let index = start;
  while (index < bytes.length && !isWhitespace(bytes[index]) && bytes[index] !== COMMA && bytes[index] !== CLOSE_OBJECT && bytes[index] !== CLOSE_ARRAY) index += 1;
  return index === start ? UNTERMINATED : index;
}

/** A top-level member as scanned: its range (see JsonMember), where its value starts, and an array value's elements. */
interface ScannedMember extends JsonMember {
  valueStart: number;
  /** Element ranges of an array value, as [start, end] pairs; null for any other value. */
  elements: number[] | null;
}

class NotLaidOut extends Error {}
class TooDeep extends Error {}

function checked(end: number): number {
  if (end === TOO_DEEP) throw new TooDeep();
  if (end < 0) throw new NotLaidOut();
  return end;
}

/** The byte at `index`, which must be `expected`. */
function expect(bytes: Buffer, index: number, expected: number): void {
  if (bytes[index] !== expected) throw new NotLaidOut();
}

/** The scan: the object's members, yielding about every `budget` bytes at a member or element boundary. */
function* scanMembers(bytes: Buffer, budget: number): Generator<void, ScannedMember[]> {
  const members: ScannedMember[] = [];
  let yieldedAt = 0;
  /** Whether the scan, now at `at`, has covered a step's worth since it last yielded (and will yield now). */
  const stepDone = (at: number): boolean => {
    if (at - yieldedAt < budget) return false;
    yieldedAt = at;
    return true;
  };
  let index = skipWhitespace(bytes, 0);
  expect(bytes, index, OPEN_OBJECT);
  index = skipWhitespace(bytes, index + 1);
  if (bytes[index] === CLOSE_OBJECT) throw new NotLaidOut(); // `{}` and whitespace: nothing to step through
  for (;;) {
    expect(bytes, index, QUOTE);
    const keyEnd = checked(endOfString(bytes, index));
    let key: string;
    try {
      key = JSON.parse(bytes.toString('utf8', index, keyEnd)) as string;
    } catch {
      throw new NotLaidOut();
    }
    const colon = skipWhitespace(bytes, keyEnd);
    expect(bytes, colon, COLON);
    const valueStart = skipWhitespace(bytes, colon + 1);
    let end: number;
    let elements: number[] | null = null;
    if (bytes[valueStart] === OPEN_ARRAY) {
      elements = [];
      let at = skipWhitespace(bytes, valueStart + 1);
      if (bytes[at] !== CLOSE_ARRAY) {
        for (;;) {
          const elementEnd = checked(endOfNestedValue(bytes, at, 2));
          elements.push(at, elementEnd);
          if (stepDone(elementEnd)) yield;
          at = skipWhitespace(bytes, elementEnd);
          if (bytes[at] === CLOSE_ARRAY) break;
          expect(bytes, at, COMMA);
          at = skipWhitespace(bytes, at + 1);
        }
      }
      end = at + 1;
    } else {
      end = checked(endOfNestedValue(bytes, valueStart, 1));
    }
    members.push({ key, start: index, end, valueStart, elements });
    if (stepDone(end)) yield;
    index = skipWhitespace(bytes, end);
    if (bytes[index] === CLOSE_OBJECT) break;
    expect(bytes, index, COMMA);
    index = skipWhitespace(bytes, index + 1);
  }
  if (skipWhitespace(bytes, index + 1) !== bytes.length) throw new NotLaidOut();
  return members;
}

/**
 * JSON.parse of bytes[start, end): a value alone, or with `wrap` a run of elements (`[]`) or
 * members (`{}`), copied between the brackets. A value alone is read in place, so a large one
 * (an image's base64) is not copied first.
 */
function parseRun(bytes: Buffer, start: number, end: number, wrap?: '[]' | '{}'): ParsedJson {
  if (wrap === undefined) return parseJsonBytes(bytes.subarray(start, end));
  return parseJsonBytes(Buffer.concat([Buffer.from(wrap[0]!), bytes.subarray(start, end), Buffer.from(wrap[1]!)]));
}

/** Sets a member as JSON.parse does: an own data property, `__proto__` included, a repeated key keeping its place. */
function define(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * The whole stepped parse of `bytes`, which should hold one JSON object (a body of a megabyte
 * or more). Yields between steps; see SteppedParse for what it answers.
 */
export function* parseObjectInSteps(bytes: Buffer, budget: StepBudget = DEFAULT_BUDGET): Generator<void, SteppedParse> {
  let members: ScannedMember[];
  try {
    members = yield* scanMembers(bytes, budget.scanBytesPerStep);
  } catch (failure) {
    if (failure instanceof TooDeep) return { kind: 'too_deep' };
    if (failure instanceof NotLaidOut) return { kind: 'not_laid_out' };
    throw failure;
  }
  rememberTopLevelMembers(bytes, members.map(({ key, start, end }) => ({ key, start, end })));
  yield;
  const limit = budget.parseBytesPerStep;
  const isLargeArray = (member: ScannedMember) => member.elements !== null && member.end - member.valueStart > limit;
  const value: Record<string, unknown> = {};
  let poisoned = false;
  let parsedSinceYield = 0;
  /**
   * Checks a parsed run for prototype keys (walking it only when the text JSON.parse read could
   * spell one: searched in that text, where long strings are stood in for, it is quick), then
   * says whether to yield: when a step's worth has been parsed since the last yield.
   */
  const afterRun = ({ value: run, text }: ParsedJson, length: number): boolean => {
    if (!poisoned && maySpellPoisonKey(text)) poisoned = isPoisoned(run);
    parsedSinceYield += length;
    if (parsedSinceYield < limit) return false;
    parsedSinceYield = 0;
    return true;
  };
  for (let first = 0; first < members.length; ) {
    const member = members[first]!;
    const { elements } = member;
    if (elements !== null && isLargeArray(member)) {
      // A large array: its elements in runs.
      const array: unknown[] = [];
      for (let element = 0; element < elements.length; ) {
        let last = element;
        while (last + 2 < elements.length && elements[last + 3]! - elements[element]! <= limit) last += 2;
        const run = parseRun(bytes, elements[element]!, elements[last + 1]!, last === element ? undefined : '[]');
        if (last === element) array.push(run.value);
        else for (const item of run.value as unknown[]) array.push(item);
        if (afterRun(run, elements[last + 1]! - elements[element]!)) yield;
        element = last + 2;
      }
      define(value, member.key, array);
      first += 1;
      continue;
    }
    // A run of members that are not large arrays, parsed as one object and copied in order;
    // a member alone, its value alone.
    let last = first;
    while (last + 1 < members.length && members[last + 1]!.end - member.start <= limit && !isLargeArray(members[last + 1]!)) last += 1;
    if (last === first) {
      const run = parseRun(bytes, member.valueStart, member.end);
      define(value, member.key, run.value);
      if (afterRun(run, member.end - member.valueStart)) yield;
    } else {
      const run = parseRun(bytes, member.start, members[last]!.end, '{}');
      const runValue = run.value as Record<string, unknown>;
      for (const key of Object.keys(runValue)) define(value, key, runValue[key]);
      if (afterRun(run, members[last]!.end - member.start)) yield;
    }
    first = last + 1;
  }
  // The key of a member parsed alone is in no run that isPoisoned looked at.
  if (!poisoned) poisoned = holdsPoisonKey(value);
  return { kind: 'parsed', value, poisoned };
}
