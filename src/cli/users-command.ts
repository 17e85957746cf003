import { InvalidArgumentError, type Command } from 'commander';
import { ROLES, type Role, type UserView } from '../accounts/index.js';
import { AdminClient, withAdminOptions, type AdminOptions } from './admin-client.js';
import { printJson, printTable } from './output.js';
import { readPassword } from './password-input.js';

/** `modelgate users …`: dashboard accounts, a client of the admin API's user routes (docs/cli.md). */

interface PasswordOptions extends AdminOptions {
  passwordStdin?: boolean;
}

function parseRole(value: string): Role {
  if (!(ROLES as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${ROLES.join(', ')}`);
  return value as Role;
}

function printUsers(users: readonly UserView[]): void {
  if (users.length === 0) {
    process.stdout.write('No dashboard accounts yet. Create one with: modelgate users create --email you@example.com\n');
    return;
  }
  printTable(
    ['id', 'email', 'role', 'state', 'created'],
    users.map((user) => [user.id, user.email, user.role, user.disabled ? 'disabled' : 'active', user.created_at]),
  );
}

function printUser(user: UserView, done: string): void {
  process.stdout.write(`${done} ${user.email} (${user.role}, ${user.disabled ? 'disabled' : 'active'}, id ${user.id})\n`);
}

export function registerUsersCommand(program: Command): void {
  const users = program.command('users').description('dashboard accounts: create, list, disable, reset-password');

  withAdminOptions(users.command('create').description('create a dashboard account (the password is prompted for, or read with --password-stdin)'))
    .requiredOption('--email <email>', 'the email to sign in with')
    .option('--role <role>', `${ROLES.join(' or ')} (default admin)`, parseRole)
    .option('--password-stdin', 'read the password from standard input')
    .action(async (options: PasswordOptions & { email: string; role?: Role }) => {
      const client = AdminClient.fromOptions(options);
      const password = await readPassword(options.passwordStdin === true);
      const user = await client.request<UserView>('POST', '/users', { email: options.email, password, role: options.role ?? 'admin' });
      if (options.json === true) printJson(user);
      else printUser(user, 'Created');
    });

  withAdminOptions(users.command('list').description('list dashboard accounts')).action(async (options: AdminOptions) => {
    const list = await AdminClient.fromOptions(options).request<{ data: UserView[] }>('GET', '/users');
    if (options.json === true) printJson(list);
    else printUsers(list.data);
  });

  for (const [action, done] of [['disable', 'Disabled'], ['enable', 'Enabled']] as const) {
    withAdminOptions(users.command(`${action} <user>`).description(`${action} an account (id or email)${action === 'disable' ? '; ends its sessions' : ''}`)).action(
      async (user: string, options: AdminOptions) => {
        const changed = await AdminClient.fromOptions(options).request<UserView>('POST', `/users/${encodeURIComponent(user)}/${action}`);
        if (options.json === true) printJson(changed);
        else printUser(changed, done);
      },
    );
  }

  withAdminOptions(users.command('reset-password <user>').description("set an account's password (id or email); ends its sessions"))
    .option('--password-stdin', 'read the password from standard input')
    .action(async (user: string, options: PasswordOptions) => {
      const client = AdminClient.fromOptions(options);
      const password = await readPassword(options.passwordStdin === true);
      const changed = await client.request<UserView>('POST', `/users/${encodeURIComponent(user)}/password`, { password });
      if (options.json === true) printJson(changed);
      else printUser(changed, 'New password set for');
    });
}
