import type { AppContext } from '../../context.ts';

// With SIGNUP=invite, a provider sign-in opens a new account only with an invitation passed to
// /console/api/oidc/start?invite=. The invitations themselves are sign-up's (POST /admin/invites):
// this is the one question OIDC asks of them.

export interface InviteClaim {
  /** Uses the invitation for this email, once: true if it was valid (and is now spent). */
  claim(ctx: AppContext, code: string, email: string): Promise<boolean>;
}

/** No invitations are stored here, so none is valid: invite mode opens no account through a provider. */
export const invites: InviteClaim = {
  async claim() {
    return false;
  },
};
