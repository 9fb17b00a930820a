import { useEffect, useState, type ReactElement } from 'react';
import { api, setBillingUnit, setCsrfToken, setTopupSettings, type Session } from './api.ts';
import { useHashRoute } from './hooks.ts';
import { SignIn } from './pages/SignIn.tsx';
import { Overview } from './pages/Overview.tsx';
import { Tasks } from './pages/Tasks.tsx';
import { Calls } from './pages/Calls.tsx';
import { Settings } from './pages/Settings.tsx';
import { Accounts } from './operator/Accounts.tsx';
import { Channels } from './operator/Channels.tsx';
import { Totals } from './operator/Totals.tsx';
import { Calls as OperatorCalls } from './operator/Calls.tsx';
import { PricesPage } from './operator/Prices.tsx';
import { Codes } from './operator/Codes.tsx';
import { Groups } from './operator/Groups.tsx';
import { TopUp } from './pages/TopUp.tsx';
import { Topups } from './operator/Topups.tsx';
import { Invites } from './operator/Invites.tsx';
import { SignUp } from './pages/SignUp.tsx';
import { Verify } from './pages/Verify.tsx';
import { ForgotPassword } from './pages/ForgotPassword.tsx';
import { ResetPassword } from './pages/ResetPassword.tsx';

const ACCOUNT_PAGES = [
  { path: '/', label: 'Overview', view: Overview },
  { path: '/calls', label: 'Calls', view: Calls },
  { path: '/tasks', label: 'Tasks', view: Tasks },
  { path: '/settings', label: 'Callbacks', view: Settings },
];
const OPERATOR_PAGES = [
  { path: '/', label: 'Totals', view: Totals },
  { path: '/calls', label: 'Calls', view: OperatorCalls },
  { path: '/accounts', label: 'Accounts', view: Accounts },
  { path: '/channels', label: 'Channels', view: Channels },
  { path: '/prices', label: 'Prices', view: PricesPage },
  { path: '/groups', label: 'Groups', view: Groups },
  { path: '/codes', label: 'Codes', view: Codes },
  { path: '/invites', label: 'Invites', view: Invites },
];
// Shown only when the gateway takes payments (STRIPE_SECRET_KEY set).
const ACCOUNT_TOPUP_PAGE = { path: '/topups', label: 'Top-up', view: TopUp };
const OPERATOR_TOPUP_PAGE = { path: '/topups', label: 'Top-ups', view: Topups };
// Pages for people who are not signed in; mailed links open the last two, so they show whoever is signed in.
const PUBLIC_PAGES: Record<string, () => ReactElement> = { '/signup': SignUp, '/verify': Verify, '/forgot': ForgotPassword, '/reset': ResetPassword };

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const route = useHashRoute();

  useEffect(() => {
    api<Session>('GET', '/console/api/session')
      .then((s) => {
        setCsrfToken(s.csrf_token);
        setBillingUnit(s.billing_unit);
        setTopupSettings(s.topups);
        setSession(s);
      })
      .catch(() => setSession(null));
  }, []);

  const signedIn = (s: Session) => {
    setCsrfToken(s.csrf_token);
    setBillingUnit(s.billing_unit);
    setTopupSettings(s.topups);
    setSession(s);
    window.location.hash = '#/';
  };
  const signOut = async () => {
    await api('DELETE', '/console/api/session').catch(() => undefined);
    setCsrfToken('');
    setSession(null);
  };

  const Public = PUBLIC_PAGES[route.split('?')[0]!];
  if (Public) return <Public />;
  if (session === undefined) return <p className="loading">Loading…</p>;
  if (session === null) return <SignIn onSignedIn={signedIn} />;

  const operator = session.role === 'operator';
  const pages = [...(operator ? OPERATOR_PAGES : ACCOUNT_PAGES), ...(session.topups ? [operator ? OPERATOR_TOPUP_PAGE : ACCOUNT_TOPUP_PAGE] : [])];
  const page = pages.find((p) => p.path === route) ?? pages[0]!;
  const View = page.view;
  return (
    <div className="shell">
      <header className="topbar">
        <span className="brand">Generation Gateway</span>
        <nav aria-label="Console pages">
          <ul>
            {pages.map((p) => (
              <li key={p.path}>
                <a href={`#${p.path}`} aria-current={p === page ? 'page' : undefined}>
                  {p.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span className="who">{session.role === 'operator' ? 'Operator' : 'Account'}</span>
        <button type="button" className="secondary" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main">
        <h1>{page.label}</h1>
        <View />
      </main>
    </div>
  );
}
