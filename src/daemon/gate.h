/*
 * The gate every peer connection's output passes: while the changes of a
 * loop turn are not yet durable, nothing is written to any peer (answers
 * and pushed updates wait in their buffers); the group commit opens it
 * once the turn's journal records are synced, or drops the connections
 * that hold answers to changes it had to undo.
 */
#ifndef TOPOAWARE_GATE_H
#define TOPOAWARE_GATE_H

struct bufferevent;
struct gate;

struct gate	*gate_new(void);
void		 gate_free(struct gate *);
/*
 * A connection's bufferevent joins (held at once when the gate is);
 * drop(arg) is how its owner closes it when its held output must not go
 * out. gate_leave before the owner disables or frees the bufferevent.
 */
void		 gate_join(struct gate *, struct bufferevent *,
		     void (*drop)(void *), void *);
void		 gate_leave(struct gate *, struct bufferevent *);
void		 gate_hold(struct gate *);
int		 gate_held(const struct gate *);
/* Lets every held output go, and writes what waits in the outputs to
 * the sockets now, as far as they take it. */
void		 gate_open(struct gate *);
/* Closes, by their owners, the connections with output held; opens. */
int		 gate_drop(struct gate *);

#endif
