import { SMTPServer } from 'smtp-server';

// A real SMTP server on a loopback port that keeps every mail it is given: the gateway's mailer
// (nodemailer over SMTP_URL) talks to it as to any mail server. Plain SMTP, no auth, no STARTTLS.

export interface ReceivedMail {
  to: string[];
  subject: string;
  /** The body, transfer encoding undone. */
  text: string;
}

/** Undoes quoted-printable (soft line breaks and =XX bytes), which nodemailer uses for long lines. */
function fromQuotedPrintable(body: string): string {
  const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

function parse(raw: string, to: string[]): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1]?.trim() ?? '';
  const encoding = header('Content-Transfer-Encoding').toLowerCase();
  const text = encoding === 'quoted-printable' ? fromQuotedPrintable(body) : encoding === 'base64' ? Buffer.from(body, 'base64').toString('utf8') : body;
  return { to, subject: header('Subject'), text: text.replace(/\r\n/g, '\n').trimEnd() };
}

export interface SmtpSink {
  url: string;
  mails: ReceivedMail[];
  /** The first mail to `to` (lower case) whose subject matches, waiting for it up to `timeoutMs`. */
  waitFor(to: string, subject: RegExp, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        mails.push(parse(Buffer.concat(chunks).toString('latin1'), session.envelope.rcptTo.map((r) => r.address.toLowerCase())));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    async waitFor(to, subject, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const mail = mails.find((m) => m.to.includes(to) && subject.test(m.subject));
        if (mail) return mail;
        if (Date.now() > until) throw new Error(`no mail to ${to} matching ${subject} (have: ${JSON.stringify(mails.map((m) => [m.to, m.subject]))})`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The token of the console link in a mail (`.../console/#/verify?token=...`). */
export function linkToken(mail: ReceivedMail, page: 'verify' | 'reset'): string {
  const match = new RegExp(`/console/#/${page}\\?token=([A-Za-z0-9_%-]+)`).exec(mail.text);
  if (!match) throw new Error(`no ${page} link in: ${mail.text}`);
  return decodeURIComponent(match[1]!);
}

/** The console link itself, as a person would open it. */
export function linkIn(mail: ReceivedMail, page: 'verify' | 'reset'): string {
  const match = new RegExp(`https?://\\S+/console/#/${page}\\?token=[A-Za-z0-9_%-]+`).exec(mail.text);
  if (!match) throw new Error(`no ${page} link in: ${mail.text}`);
  return match[0];
}
