package core

import (
	"net/mail"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Customer is who an order is for, as the box office or the front end
// entered it; every field is optional.
type Customer struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Phone string `json:"phone"`
}

// Customer limits: the columns of order_info are this wide.
const (
	MaxCustomerName  = 100 // characters
	MaxCustomerEmail = 254 // bytes (RFC 5321's path limit)
	MaxCustomerPhone = 20  // after normalizing
)

// Errors naming the customer field that is wrong.
var (
	ErrCustomerName  = &Error{Kind: KindInvalid, Code: "invalid_customer_name", Message: "customer name is invalid"}
	ErrCustomerEmail = &Error{Kind: KindInvalid, Code: "invalid_customer_email", Message: "customer email is invalid"}
	ErrCustomerPhone = &Error{Kind: KindInvalid, Code: "invalid_customer_phone", Message: "customer phone is invalid"}
)

func customerErr(sentinel *Error, msg string) error {
	return &Error{Kind: KindInvalid, Code: sentinel.Code, Message: msg}
}

// Normalize checks c and returns it in the form it is stored and searched
// in: trimmed, the email lower-cased, the phone as digits with an optional
// leading + (spaces, dashes, dots and parentheses dropped).
func (c Customer) Normalize() (Customer, error) {
	c.Name = strings.TrimSpace(c.Name)
	switch {
	case !utf8.ValidString(c.Name):
		return Customer{}, customerErr(ErrCustomerName, "customer name must be UTF-8")
	case utf8.RuneCountInString(c.Name) > MaxCustomerName:
		return Customer{}, customerErr(ErrCustomerName, "customer name may have at most 100 characters")
	case strings.IndexFunc(c.Name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		return Customer{}, customerErr(ErrCustomerName, "customer name may only have printable characters")
	}
	email, err := NormalizeEmail(c.Email)
	if err != nil {
		return Customer{}, err
	}
	phone, err := NormalizePhone(c.Phone)
	if err != nil {
		return Customer{}, err
	}
	c.Email, c.Phone = email, phone
	return c, nil
}

// NormalizeEmail checks a bare address (no display name) and lower-cases it.
func NormalizeEmail(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if len(s) > MaxCustomerEmail {
		return "", customerErr(ErrCustomerEmail, "customer email may have at most 254 characters")
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s || !strings.Contains(s[strings.LastIndexByte(s, '@'):], ".") {
		return "", customerErr(ErrCustomerEmail, "customer email must be an address such as name@example.com")
	}
	return strings.ToLower(s), nil
}

// NormalizePhone keeps the digits and a leading +, dropping the separators
// people type; anything else is an error.
func NormalizePhone(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '+' && i == 0:
			b.WriteRune(r)
		case r == ' ' || r == '-' || r == '.' || r == '(' || r == ')':
		default:
			return "", customerErr(ErrCustomerPhone, "customer phone may have only digits, a leading +, spaces and dashes")
		}
	}
	p := b.String()
	digits := strings.TrimPrefix(p, "+")
	switch {
	case len(digits) < 3:
		return "", customerErr(ErrCustomerPhone, "customer phone must have at least 3 digits")
	case len(p) > MaxCustomerPhone:
		return "", customerErr(ErrCustomerPhone, "customer phone may have at most 20 characters")
	}
	return p, nil
}
