/*
 * The admin socket's wire format (SPEC R-ADMIN), without I/O: one JSON
 * object per line each way. A request is {"command": "...", "args": [...]}
 * (args optional, strings only, no other keys); a reply is
 * {"ok":true,"result":...} or {"ok":false,"error":"..."}. The server side
 * splits and checks requests; the client side (topoawarectl) encodes
 * requests and decodes replies.
 */
#ifndef TOPOAWARE_ADMINPROTO_H
#define TOPOAWARE_ADMINPROTO_H

#include <stddef.h>

#include <jansson.h>

/*
 * A config sent with `reload --dry-run`: at most as many bytes as the
 * daemon reads of its config file (SERVER_CONFIG_MAX), as one argument in
 * base64, which carries any bytes (a file that is not UTF-8 too).
 */
#define ADMINPROTO_MAX_CONFIG	(1024 * 1024)
#define ADMINPROTO_B64_LEN(n)	(((n) + 2) / 3 * 4)
/* The longest request line, without its newline: such a config and 64
 * KiB for the rest. */
#define ADMINPROTO_MAX_LINE	\
	(ADMINPROTO_B64_LEN(ADMINPROTO_MAX_CONFIG) + 64 * 1024)

/* One connection's partial input; embedded, adminproto_init/_clear. */
struct adminproto {
	char	*buf;		/* bytes of an unfinished line */
	size_t	 len;
	size_t	 size;
	int	 discard;	/* inside an over-long line */
};

/*
 * Called once per request line: with the command and its arguments
 * (borrowed, valid during the call only; args is NULL-terminated) and
 * error NULL, or with command NULL and error saying why the line was
 * refused (the error text is meant for the peer). A non-zero return stops
 * adminproto_feed after this line.
 */
typedef int	(*adminproto_cb)(void *arg, const char *command,
		    const char *const *args, size_t nargs, const char *error);

void	adminproto_init(struct adminproto *);
void	adminproto_clear(struct adminproto *);

/*
 * Consumes len bytes of input, calling cb for each complete line. Blank
 * lines are skipped and a trailing "\r" is dropped. A line longer than
 * ADMINPROTO_MAX_LINE is reported once, as soon as it is too long, and the
 * rest of it up to its newline is discarded. Returns the bytes consumed:
 * len, or less when cb asked to stop; the caller feeds the rest later.
 */
size_t	adminproto_feed(struct adminproto *, const char *buf, size_t len,
	    adminproto_cb cb, void *arg);
/*
 * The peer has said all it will: a last line without its newline is a
 * request too, handled (through cb) as if it had one. Nothing happens for
 * no partial line, nor for the rest of an over-long one.
 */
void	adminproto_finish(struct adminproto *, adminproto_cb cb, void *arg);
/* Whether a line has begun and not ended. */
int	adminproto_partial(const struct adminproto *);

/*
 * Reply lines with their newline (caller frees). reply_ok takes ownership
 * of result, which may be NULL for null; an error text that is not UTF-8
 * has its bad bytes replaced by '?'.
 */
char	*adminproto_reply_ok(json_t *result);
char	*adminproto_reply_error(const char *error);

/* A request line with its newline (caller frees); args may be NULL. */
char	*adminproto_request(const char *command, const char *const *args,
	    size_t nargs);
/*
 * Bytes as a request argument: standard base64, padded, NUL-terminated
 * (caller frees). And back: 0 with *out (NUL-terminated, caller frees)
 * and *outlen, or -EINVAL when text is not that form.
 */
char	*adminproto_b64(const void *, size_t);
int	adminproto_unb64(const char *text, size_t len, char **out,
	    size_t *outlen);
/*
 * Decodes a reply line (the newline optional): 1 with *result a new
 * reference for an ok reply, 0 with *error (caller frees) for an error
 * reply, -EBADMSG with *error saying why for anything else.
 */
int	adminproto_parse_reply(const char *line, size_t len, json_t **result,
	    char **error);

#endif
