// Command narad is the one Narad binary: the server and the client commands.
// It stays thin: it parses arguments and calls bootstrap or the HTTP client.
package main
