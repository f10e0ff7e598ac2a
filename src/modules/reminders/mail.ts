import nodemailer from 'nodemailer'
import type { SmtpConfig } from '../../config/schema.ts'

export interface ReminderMail {
  to: string
  orgName: string
  orgSlug: string
  keyName: string
  keyPrefix: string
  keyId: string
  role: string
  expiresAt: number
}

/** The reminder's text: who, which key, when, and how to rotate. Never a secret (there is none to give). */
export function composeReminder(mail: ReminderMail): { subject: string; text: string } {
  const expiry = new Date(mail.expiresAt).toISOString()
  return {
    subject: `[sitegrid] API key "${mail.keyName}" (${mail.keyPrefix}…) of ${mail.orgName} expires on ${expiry.slice(0, 10)}`,
    text: [
      `The tenant API key "${mail.keyName}" of the organisation ${mail.orgName} (${mail.orgSlug}) expires on ${expiry}.`,
      '',
      `  key id:   ${mail.keyId}`,
      `  prefix:   ${mail.keyPrefix}…`,
      `  role:     ${mail.role}`,
      `  expires:  ${expiry}`,
      '',
      'After that moment it stops authenticating. To rotate it without an outage:',
      '  1. mint a new key with the same role: POST /api/admin/api-keys (or `sitegrid key mint`),',
      '  2. switch every caller over to the new key,',
      `  3. revoke the old one: DELETE /api/admin/api-keys/${mail.keyId} (or \`sitegrid key revoke\`).`,
      '',
      'This is a courtesy reminder; you receive it because you created the key.',
    ].join('\n'),
  }
}

export type SendMail = (mail: ReminderMail) => Promise<void>

export function createSmtpSender(smtp: SmtpConfig): SendMail {
  const transport = nodemailer.createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.security === 'tls',
    requireTLS: smtp.security === 'starttls',
    ignoreTLS: smtp.security === 'none',
    auth: smtp.user && smtp.password ? { user: smtp.user, pass: smtp.password } : undefined,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  })
  return async (mail) => {
    const { subject, text } = composeReminder(mail)
    await transport.sendMail({ from: smtp.from, to: mail.to, subject, text })
  }
}
