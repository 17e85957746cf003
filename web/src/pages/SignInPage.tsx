import * as Label from '@radix-ui/react-label';
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useLocation, useNavigate, useSearchParams } from 'react-router-dom';
import { adminApi, ApiError } from '../api.js';
import { useSession } from '../session.js';
import { ErrorAlert } from '../components/ErrorAlert';

export function SignInPage() {
  const { signIn } = useSession();
  const navigate = useNavigate();
  const location = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [searchParams] = useSearchParams();
  // A single sign-on that failed comes back here with the reason.
  const [error, setError] = useState<string | null>(searchParams.get('sso_error'));
  const [busy, setBusy] = useState(false);
  const sso = useQuery({ queryKey: ['sso'], queryFn: adminApi.session.sso, staleTime: Infinity });
  const from = (location.state as { from?: string } | null)?.from;
  const returnTo = from !== undefined && from !== '/sign-in' ? from : '/';

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn(email, password);
      navigate(returnTo, { replace: true });
    } catch (failure) {
      setError(failure instanceof ApiError ? failure.message : 'The gateway could not be reached. Is it running?');
      setBusy(false);
    }
  };

  return (
    <main id="main" className="sign-in">
      <form onSubmit={(event) => void submit(event)} aria-describedby={error !== null ? 'sign-in-error' : undefined}>
        <h1>Sign in to modelgate</h1>
        {sso.data?.enabled === true && (
          <>
            <a className="button sso" href={adminApi.session.ssoLoginUrl(returnTo)}>
              Sign in with {sso.data.provider_name}
            </a>
            <p className="divider">or with a local account</p>
          </>
        )}
        <div className="field">
          <Label.Root htmlFor="email">Email</Label.Root>
          <input id="email" type="email" autoComplete="username" required value={email} onChange={(event) => setEmail(event.target.value)} />
        </div>
        <div className="field">
          <Label.Root htmlFor="password">Password</Label.Root>
          <input id="password" type="password" autoComplete="current-password" required value={password} onChange={(event) => setPassword(event.target.value)} />
        </div>
        <ErrorAlert message={error} id="sign-in-error" />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p className="hint">
          No account yet? On the gateway's machine run <code>npx modelgate users create --email you@example.com</code>.
        </p>
      </form>
    </main>
  );
}
