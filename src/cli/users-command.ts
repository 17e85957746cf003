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

function parseTeams(value: string): string[] {
  const teams = value.split(',').map((team) => team.trim()).filter((team) => team.length > 0);
  if (teams.length === 0) throw new InvalidArgumentError('expected team ids, comma-separated');
  return teams;
}

/** A role as the table and messages show it: a team admin with its teams. */
function roleOf(user: UserView): string {
  return user.role === 'team_admin' ? `team_admin of ${user.team_ids.join(', ')}` : user.role;
}

function printUsers(users: readonly UserView[]): void {
  if (users.length === 0) {
    process.stdout.write('No dashboard accounts yet. Create one with: modelgate users create --email you@example.com\n');
    return;
  }
  printTable(
    ['id', 'email', 'role', 'sign-in', 'state', 'created'],
    users.map((user) => [user.id, user.email, roleOf(user), user.sso ? 'sso' : 'password', user.disabled ? 'disabled' : 'active', user.created_at]),
  );
}

function printUser(user: UserView, done: string): void {
  process.stdout.write(`${done} ${user.email} (${roleOf(user)}, ${user.disabled ? 'disabled' : 'active'}, id ${user.id})\n`);
}

export function registerUsersCommand(program: Command): void {
  const users = program.command('users').description('dashboard accounts: create, list, set-role, disable, reset-password');

  withAdminOptions(users.command('create').description('create a dashboard account (the password is prompted for, or read with --password-stdin)'))
    .requiredOption('--email <email>', 'the email to sign in with')
    .option('--role <role>', `${ROLES.join(', ')} (default admin)`, parseRole)
    .option('--teams <ids>', 'for team_admin: the teams it manages, comma-separated', parseTeams)
    .option('--password-stdin', 'read the password from standard input')
    .action(async (options: PasswordOptions & { email: string; role?: Role; teams?: string[] }) => {
      const client = AdminClient.fromOptions(options);
      const password = await readPassword(options.passwordStdin === true);
      const user = await client.request<UserView>('POST', '/users', { email: options.email, password, role: options.role ?? 'admin', ...(options.teams !== undefined ? { team_ids: options.teams } : {}) });
      if (options.json === true) printJson(user);
      else printUser(user, 'Created');
    });

  withAdminOptions(users.command('list').description('list dashboard accounts')).action(async (options: AdminOptions) => {
    const list = await AdminClient.fromOptions(options).request<{ data: UserView[] }>('GET', '/users');
    if (options.json === true) printJson(list);
    else printUsers(list.data);
  });

  withAdminOptions(users.command('set-role <user>').description("change an account's role and teams (id or email); ends its sessions"))
    .requiredOption('--role <role>', ROLES.join(', '), parseRole)
    .option('--teams <ids>', 'for team_admin: the teams it manages, comma-separated', parseTeams)
    .action(async (user: string, options: AdminOptions & { role: Role; teams?: string[] }) => {
      const body = { role: options.role, ...(options.teams !== undefined ? { team_ids: options.teams } : {}) };
      const changed = await AdminClient.fromOptions(options).request<UserView>('PATCH', `/users/${encodeURIComponent(user)}`, body);
      if (options.json === true) printJson(changed);
      else printUser(changed, 'Changed');
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
