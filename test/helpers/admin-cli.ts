import { execFile } from 'node:child_process';
import { TEST_ADMIN_TOKEN, type TestGateway } from './gateway.js';

/** A `modelgate …` command of the admin API's clients, as an operator runs it against `gateway` (dist/ must be built). */
export function adminCli(gateway: TestGateway, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['bin/modelgate.js', ...args, '--url', gateway.url],
      { env: { ...process.env, MODELGATE_ADMIN_TOKEN: TEST_ADMIN_TOKEN } },
      (error, stdout, stderr) => done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr }),
    );
  });
}
