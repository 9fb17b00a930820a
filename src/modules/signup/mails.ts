import type { AppContext } from '../../context.ts';
import { consoleLink } from './tokens.ts';
import type { Mail } from './mailer.ts';

// The words of each mail. Plain text: every mail client shows it, and a link is a line of its own.

type Ctx = Pick<AppContext, 'config'>;

const hours = (ms: number) => (ms >= 3_600_000 ? `${Math.round(ms / 3_600_000)} hour(s)` : `${Math.max(1, Math.round(ms / 60_000))} minute(s)`);

export const verifyMail = (ctx: Ctx, to: string, token: string): Mail => ({
  to,
  subject: 'Confirm your email for the Generation Gateway console',
  text: [
    'Someone (we hope you) opened a Generation Gateway account with this address.',
    '',
    'Confirm the address to sign in:',
    consoleLink(ctx, 'verify', { token }),
    '',
    `The link works once, for ${hours(ctx.config.signup.verifyTtlMs)}. If it was not you, ignore this mail.`,
  ].join('\n'),
});

export const accountExistsMail = (ctx: Ctx, to: string): Mail => ({
  to,
  subject: 'You already have a Generation Gateway account',
  text: [
    'Someone (we hope you) tried to open a Generation Gateway account with this address, which already has one.',
    '',
    'Sign in:',
    consoleLink(ctx, 'signin'),
    '',
    'Forgot your password? Ask for a new one:',
    consoleLink(ctx, 'forgot'),
    '',
    'If it was not you, ignore this mail: nothing has changed.',
  ].join('\n'),
});

export const resetMail = (ctx: Ctx, to: string, token: string): Mail => ({
  to,
  subject: 'Set a new password for the Generation Gateway console',
  text: [
    'Someone (we hope you) asked to set a new password for the Generation Gateway account of this address.',
    '',
    'Choose a new password:',
    consoleLink(ctx, 'reset', { token }),
    '',
    `The link works once, for ${hours(ctx.config.signup.resetTtlMs)}. If it was not you, ignore this mail: your password stays as it is.`,
  ].join('\n'),
});
