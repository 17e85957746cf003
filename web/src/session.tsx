import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import type { SessionView } from '@modelgate/admin-api';
import { adminApi, ApiError, setCsrfToken, whenSessionEnds } from './api.js';

/** The signed-in account, shared by every page; null while signed out. */
interface SessionState {
  session: SessionView | null;
  loading: boolean;
  signIn(email: string, password: string): Promise<void>;
  signOut(): Promise<void>;
}

const SessionContext = createContext<SessionState | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<SessionView | null>(null);
  const [loading, setLoading] = useState(true);

  const adopt = useCallback((view: SessionView | null) => {
    setCsrfToken(view?.csrf_token ?? null);
    setSession(view);
  }, []);

  useEffect(() => {
    whenSessionEnds(() => adopt(null));
    adminApi.session
      .get()
      .then(adopt)
      .catch((error: unknown) => {
        if (!(error instanceof ApiError)) throw error;
        adopt(null);
      })
      .finally(() => setLoading(false));
  }, [adopt]);

  const value = useMemo<SessionState>(
    () => ({
      session,
      loading,
      async signIn(email, password) {
        adopt(await adminApi.session.signIn(email, password));
      },
      async signOut() {
        await adminApi.session.signOut().catch(() => undefined);
        adopt(null);
      },
    }),
    [session, loading, adopt],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (state === null) throw new Error('useSession outside SessionProvider');
  return state;
}
