import type { ReactNode } from 'react';
import type { Static } from 'typebox';
import type * as SignupSchemas from '../../../src/modules/signup/signup.schemas.ts';

// What the pages for people who are not signed in share: the frame, and the ?name= values a mailed
// link carries after the hash (#/verify?token=...).

export type SignupSettings = Static<typeof SignupSchemas.SignupSettings>;
export type Accepted = Static<typeof SignupSchemas.Accepted>;

export function hashParam(name: string): string {
  const query = window.location.hash.split('?')[1] ?? '';
  return new URLSearchParams(query).get(name) ?? '';
}

/** The provider sign-in's start, with the invitation a new account needs (SIGNUP=invite) if there is one. */
export function providerStart(invite: string): string {
  return invite ? `/console/api/oidc/start?invite=${encodeURIComponent(invite)}` : '/console/api/oidc/start';
}

export function PublicFrame({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="signin">
      <p className="brand">Generation Gateway console</p>
      <h1>{title}</h1>
      {children}
      <p className="public-links">
        <a href="#/">Back to sign in</a>
      </p>
    </main>
  );
}

/** The answer of a form that succeeded, read out to screen readers. */
export function Done({ message }: { message?: string }) {
  if (!message) return null;
  return (
    <p className="done" role="status">
      {message}
    </p>
  );
}
