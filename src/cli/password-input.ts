import { CliError } from './output.js';

/**
 * Passwords for `modelgate users`: read from standard input (`--password-stdin`, for
 * scripts), or typed on the terminal without echo and asked twice. Never an argument: a
 * command line is visible to every user of the machine and kept in shell history.
 */

async function readAll(stream: NodeJS.ReadStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  // One trailing line break is the end of the line `echo` or a file gave, not part of the password.
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** One line typed with echo off; Ctrl-C aborts. */
function promptHidden(prompt: string, input: NodeJS.ReadStream, output: NodeJS.WriteStream): Promise<string> {
  return new Promise((resolve, reject) => {
    output.write(prompt);
    let typed = '';
    input.setRawMode(true);
    input.resume();
    input.setEncoding('utf8');
    const finish = (error?: Error) => {
      input.setRawMode(false);
      input.pause();
      input.off('data', onData);
      output.write('\n');
      if (error !== undefined) reject(error);
      else resolve(typed);
    };
    const onData = (data: string) => {
      for (const character of data) {
        if (character === '\r' || character === '\n') return finish();
        if (character === '\u0003') return finish(new CliError('cancelled'));
        if (character === '\u007f' || character === '\b') typed = typed.slice(0, -1);
        else typed += character;
      }
    };
    input.on('data', onData);
  });
}

export async function readPassword(fromStdin: boolean, input: NodeJS.ReadStream = process.stdin, output: NodeJS.WriteStream = process.stderr): Promise<string> {
  if (fromStdin) {
    const password = await readAll(input);
    if (password.length === 0) throw new CliError('--password-stdin read an empty password from standard input');
    return password;
  }
  if (!input.isTTY) {
    throw new CliError('no terminal to type the password on; pipe it in with --password-stdin');
  }
  const password = await promptHidden('Password: ', input, output);
  const again = await promptHidden('Password again: ', input, output);
  if (password !== again) throw new CliError('the two passwords differ; nothing was changed');
  return password;
}

/**
 * A provider's secret setting for `modelgate providers`: typed on the terminal without echo,
 * or read whole from standard input when it is not a terminal (scripts pipe it in). Never an
 * argument, for the same reason as a password.
 */
export async function readSecret(field: string, input: NodeJS.ReadStream = process.stdin, output: NodeJS.WriteStream = process.stderr): Promise<string> {
  const secret = input.isTTY ? await promptHidden(`${field}: `, input, output) : await readAll(input);
  if (secret.length === 0) throw new CliError(`${field}: an empty secret was given`);
  return secret;
}
