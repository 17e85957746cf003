/**
 * Installs every pinned coding agent that is not in the cache yet, one after the other:
 * scripts/run-tests.mjs runs it before the client test files, so a first install (a minute or
 * more for all four) is not counted against a test file's time, nor done twice at once.
 */
import { CLIENTS_UNSUPPORTED, installedClient, PINNED_CLIENTS, type ClientName } from './installs.js';

if (CLIENTS_UNSUPPORTED === false) {
  for (const name of Object.keys(PINNED_CLIENTS) as ClientName[]) installedClient(name);
}
