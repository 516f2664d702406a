// A local SMTP server (smtp-server, nodemailer's sibling) that keeps what it receives, or refuses it.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface FakeSmtp {
  /** smtp://127.0.0.1:<port> for SERVICE_SITE_SMTP_URL. */
  url: string;
  messages: { from: string; to: string[]; raw: string }[];
  /** When set, every recipient is refused with this 5xx message. */
  refuse: string | null;
  close(): Promise<void>;
}

export async function startFakeSmtp(): Promise<FakeSmtp> {
  const fake: FakeSmtp = { url: '', messages: [], refuse: null, close: async () => undefined };
  const server = new SMTPServer({
    authOptional: true, disabledCommands: ['STARTTLS', 'AUTH'], logger: false,
    onRcptTo(_addr, _session, cb) {
      if (fake.refuse) { const e = Object.assign(new Error(fake.refuse), { responseCode: 550 }); cb(e); return; }
      cb();
    },
    onData(stream, session, cb) {
      let raw = '';
      stream.on('data', (d: Buffer) => (raw += d.toString('utf8'))).on('end', () => {
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        fake.messages.push({ from, to: session.envelope.rcptTo.map((r) => r.address), raw });
        cb();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  fake.url = `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  fake.close = () => new Promise((r) => server.close(() => r()));
  return fake;
}
