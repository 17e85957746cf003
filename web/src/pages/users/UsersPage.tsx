import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { Role, UserView } from '@modelgate/admin-api';
import { adminApi, ApiError } from '../../api.js';
import { ConfirmButton } from '../../components/ConfirmButton.js';
import { ErrorAlert } from '../../components/ErrorAlert';
import { CreateForm, InlineEditForm } from '../../components/RecordForms.js';
import { SelectField } from '../../components/SelectField';
import { oneTimePassword } from './one-time-password.js';

/**
 * Dashboard accounts (administrators only): invite with a one-time password shown once,
 * change role and teams, disable, reset the password. Accounts of single sign-on take their
 * role from the provider's groups at each sign-in.
 */

const ROLE_OPTIONS: { value: Role; label: string }[] = [
  { value: 'admin', label: 'admin' },
  { value: 'viewer', label: 'viewer' },
  { value: 'team_admin', label: 'team admin' },
];

const USERS = ['users'] as const;
const messageOf = (failure: unknown) => (failure instanceof ApiError ? failure.message : String(failure));
const teamsOf = (text: string) => text.split(',').map((team) => team.trim()).filter((team) => team.length > 0);

/** A password the gateway set for someone, shown once to hand over. */
function PasswordNotice({ notice, onDone }: { notice: { email: string; password: string }; onDone: () => void }) {
  return (
    <div className="notice" role="status">
      <p>
        One-time password for <strong>{notice.email}</strong> (shown once; hand it over privately):
      </p>
      <p>
        <code data-testid="one-time-password">{notice.password}</code>
      </p>
      <button type="button" className="secondary small" onClick={onDone}>
        Done
      </button>
    </div>
  );
}

function RoleFields({ idPrefix, role, teams, onRole, onTeams }: { idPrefix: string; role: Role; teams: string; onRole: (role: Role) => void; onTeams: (teams: string) => void }) {
  return (
    <>
      <SelectField id={`${idPrefix}-role`} label="Role" value={role} options={ROLE_OPTIONS} onChange={(value) => onRole(value as Role)} />
      {role === 'team_admin' && (
        <div className="field">
          <label htmlFor={`${idPrefix}-teams`}>Teams</label>
          <input id={`${idPrefix}-teams`} required value={teams} placeholder="team ids, comma-separated" onChange={(event) => onTeams(event.target.value)} />
        </div>
      )}
    </>
  );
}

function InviteForm({ onInvited }: { onInvited: (notice: { email: string; password: string }) => void }) {
  const client = useQueryClient();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const [teams, setTeams] = useState('');
  const invite = useMutation({
    mutationFn: (password: string) => adminApi.users.create({ email: email.trim(), password, role, ...(role === 'team_admin' ? { team_ids: teamsOf(teams) } : {}) }),
    onSuccess: (user, password) => {
      void client.invalidateQueries({ queryKey: USERS });
      setEmail('');
      onInvited({ email: user.email, password });
    },
  });
  return (
    <CreateForm titleId="invite-title" title="Invite" submitLabel="Invite" pending={invite.isPending} error={invite.error === null ? null : messageOf(invite.error)} onSubmit={() => invite.mutate(oneTimePassword())}>
      <div className="field">
        <label htmlFor="invite-email">Email</label>
        <input id="invite-email" type="email" required value={email} onChange={(event) => setEmail(event.target.value)} />
      </div>
      <RoleFields idPrefix="invite" role={role} teams={teams} onRole={setRole} onTeams={setTeams} />
    </CreateForm>
  );
}

function UserRow({ user, onPassword }: { user: UserView; onPassword: (notice: { email: string; password: string }) => void }) {
  const client = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [role, setRole] = useState<Role>(user.role);
  const [teams, setTeams] = useState(user.team_ids.join(', '));
  const refresh = () => void client.invalidateQueries({ queryKey: USERS });
  const change = useMutation({
    mutationFn: () => adminApi.users.setRole(user.id, role, teamsOf(teams)),
    onSuccess: () => {
      setEditing(false);
      refresh();
    },
  });
  const [failure, setFailure] = useState<string | null>(null);
  const act = async (work: () => Promise<unknown>) => {
    setFailure(null);
    await work().then(refresh, (error: unknown) => setFailure(messageOf(error)));
  };
  const roleText = user.role === 'team_admin' ? `team admin of ${user.team_ids.join(', ')}` : user.role;
  return (
    <tr>
      <td>{user.email}</td>
      <td>
        {editing ? (
          <InlineEditForm
            label={`Role of ${user.email}`}
            pending={change.isPending}
            error={change.error === null ? null : messageOf(change.error)}
            onSubmit={() => change.mutate()}
            onCancel={() => setEditing(false)}
          >
            <RoleFields idPrefix={`role-${user.id}`} role={role} teams={teams} onRole={setRole} onTeams={setTeams} />
          </InlineEditForm>
        ) : (
          roleText
        )}
      </td>
      <td>{user.sso ? 'single sign-on' : 'password'}</td>
      <td>
        <span className={`badge ${user.disabled ? 'revoked' : 'active'}`}>{user.disabled ? 'disabled' : 'active'}</span>
      </td>
      <td className="row-actions">
        {!editing && (
          <button type="button" className="secondary small" aria-label={`Change role of ${user.email}`} onClick={() => setEditing(true)}>
            Change role
          </button>
        )}
        <ConfirmButton
          label={user.disabled ? `Enable ${user.email}` : `Disable ${user.email}`}
          title={user.disabled ? `Enable ${user.email}?` : `Disable ${user.email}?`}
          description={user.disabled ? 'The account may sign in again.' : 'Its sessions end at once; it cannot sign in until enabled.'}
          confirmLabel={user.disabled ? 'Enable' : 'Disable'}
          danger={!user.disabled}
          onConfirm={() => act(() => adminApi.users.setDisabled(user.id, !user.disabled))}
        />
        {!user.sso && (
          <ConfirmButton
            label={`Reset password of ${user.email}`}
            title={`Reset the password of ${user.email}?`}
            description="A new one-time password is set and shown once; the account's sessions end."
            confirmLabel="Reset"
            onConfirm={() =>
              act(async () => {
                const password = oneTimePassword();
                await adminApi.users.resetPassword(user.id, password);
                onPassword({ email: user.email, password });
              })
            }
          />
        )}
        <ErrorAlert message={failure} />
      </td>
    </tr>
  );
}

export function UsersPage() {
  const users = useQuery({ queryKey: USERS, queryFn: adminApi.users.list });
  const [notice, setNotice] = useState<{ email: string; password: string } | null>(null);
  return (
    <section aria-labelledby="users-title">
      <div className="page-head">
        <h1 id="users-title">Users</h1>
      </div>
      <p className="muted">
        Dashboard accounts. A team admin manages the keys, agents, request log and usage of its teams&apos; projects only. Accounts of single sign-on get their role from the provider&apos;s groups at each sign-in.
      </p>
      {notice !== null && <PasswordNotice notice={notice} onDone={() => setNotice(null)} />}
      <ErrorAlert message={users.error === null ? null : messageOf(users.error)} />
      <table>
        <caption>Dashboard accounts</caption>
        <thead>
          <tr>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">Sign-in</th>
            <th scope="col">State</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {users.data?.data.map((user) => <UserRow key={`${user.id}-${user.updated_at}`} user={user} onPassword={setNotice} />)}
        </tbody>
      </table>
      <InviteForm onInvited={setNotice} />
    </section>
  );
}
