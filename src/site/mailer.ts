import { createTransport } from 'nodemailer';
import type { Mailer } from './notify.ts';

export interface SmtpSettings {
  /** smtp://user:pass@host:587 or smtps://…:465 (nodemailer connection URL). */
  url: string;
  /** From header, e.g. `Example <hello@example.com>`. */
  from: string;
  /** Connect, greeting and socket timeouts (default 10 s): a dead mail server never hangs a request. */
  timeoutMs?: number;
}

const WELCOME = [
  'Welcome.',
  '',
  'You are subscribed: you will hear from us when something new is published.',
  'If you did not ask for this, ignore this message and reply to be removed.',
].join('\n');

/** A Mailer over SMTP (nodemailer); one pooled-less transport, each send bounded by the timeouts. */
export function createSmtpMailer(s: SmtpSettings): Mailer & { close(): void } {
  const ms = s.timeoutMs ?? 10_000;
  const transport = createTransport({ url: s.url, connectionTimeout: ms, greetingTimeout: ms, socketTimeout: ms });
  return {
    async sendWelcome(to) {
      await transport.sendMail({ from: s.from, to, subject: 'Welcome.', text: WELCOME });
    },
    close: () => transport.close(),
  };
}
