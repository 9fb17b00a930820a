import type { Transporter } from 'nodemailer';
import type { AppContext } from '../../context.ts';

// Mail leaves in the background: an answer never waits for the SMTP server, so neither its speed
// nor its failure tells a caller whether a mail was sent (and so whether an account exists).
// A failed send is logged (the recipient, never the link) for the operator.

type Ctx = Pick<AppContext, 'config' | 'logger'>;

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

// One transport per SMTP_URL for the process; it opens a connection per mail. nodemailer is loaded
// at the first mail, so a gateway that sends none (and every CLI command) never pays for it.
const transports = new Map<string, Promise<Transporter>>();

function transportFor(url: string): Promise<Transporter> {
  let transport = transports.get(url);
  if (!transport) {
    transport = import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport(url));
    transports.set(url, transport);
  }
  return transport;
}

export const canMail = (ctx: Pick<AppContext, 'config'>) => ctx.config.mail.smtpUrl !== undefined;

export function sendInBackground(ctx: Ctx, mail: Mail): void {
  const url = ctx.config.mail.smtpUrl;
  if (!url) {
    ctx.logger.warn({ to: mail.to, subject: mail.subject }, 'mail not sent: SMTP_URL is not set');
    return;
  }
  transportFor(url)
    .then((transport) => transport.sendMail({ from: ctx.config.mail.from, to: mail.to, subject: mail.subject, text: mail.text }))
    .catch((err: unknown) => ctx.logger.error({ to: mail.to, subject: mail.subject, err: err instanceof Error ? err.message : String(err) }, 'mail not sent'));
}
