// Package access is who may use SeatFlow's console and API: staff accounts
// and their roles, console sessions, the password policy, the second factor
// (TOTP) and API keys with their scopes. It holds the rules; core/store
// keeps the rows and server/ applies the rules to each request. The engine
// (core) needs only a role, for the audit rows its transactions write.
package access
