package kube

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/progressotel/progressotel/progress"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// update is one state of object i seen by its watch: the object, or gone,
// or a refusal no retry changes (RBAC) that ends its wait.
type update struct {
	i    int
	obj  *unstructured.Unstructured
	gone bool
	err  error
}

// wait watches every object not done yet until each is, or ctx ends. The
// objects are only touched here, on the call's goroutine; the watches send
// what they see.
func (a *Applier) wait(ctx, opCtx context.Context, v verb, objs []*object) {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	updates := make(chan update)
	var wg sync.WaitGroup
	pending := 0
	for i, o := range objs {
		if o == nil || o.done {
			continue
		}
		pending++
		rv := ""
		if o.live != nil {
			rv = o.live.GetResourceVersion()
		}
		wg.Go(func() { a.watch(wctx, i, o.want, rv, updates) })
	}
	for pending > 0 {
		select {
		case u := <-updates:
			o := objs[u.i]
			if o.done {
				continue
			}
			switch {
			case u.err != nil:
				a.refused(o, u.err)
			case u.gone:
				a.gone(v, o)
			default:
				a.observe(v, o, u.obj)
			}
			if o.done {
				pending--
				a.progress(opCtx, objs)
			}
		case <-ctx.Done():
			reason, msg := endReason(ctx, v)
			for _, o := range objs {
				if o != nil && !o.done {
					a.fail(o, progress.FailureTimeout, reason, msg)
				}
			}
			pending = 0
		}
	}
	stop()
	wg.Wait()
}

// endReason is the reason and message of an object whose wait ctx ended.
func endReason(ctx context.Context, v verb) (string, string) {
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ReasonCancelled, "the run was cancelled before the object was ready"
	}
	if v == verbDelete {
		return ReasonTimeout, "the object was not gone in time"
	}
	return ReasonTimeout, "the object was not ready in time"
}

// watch follows one object from resourceVersion rv, sending each state it
// sees. A watch the API server ends (its timeout, a restart) resumes from
// the last resourceVersion seen, so nothing is missed or seen twice; a
// resourceVersion too old to resume from (410 Gone) restarts from the
// object's current state. It returns when ctx ends.
func (a *Applier) watch(ctx context.Context, i int, want *unstructured.Unstructured, rv string, out chan<- update) {
	send := func(u update) bool {
		select {
		case out <- u:
			return true
		case <-ctx.Done():
			return false
		}
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(want.GroupVersionKind().GroupVersion().WithKind(want.GetKind() + "List"))
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		if rv == "" {
			// No resourceVersion to resume from: start from the object's
			// state now (a watch from "" would say nothing of an object
			// that is gone).
			cur := &unstructured.Unstructured{}
			cur.SetGroupVersionKind(want.GroupVersionKind())
			err := a.c.Get(ctx, client.ObjectKeyFromObject(want), cur)
			switch {
			case apierrors.IsNotFound(err):
				send(update{i: i, gone: true})
				return
			case err == nil:
				rv = cur.GetResourceVersion()
				if !send(update{i: i, obj: cur}) {
					return
				}
			}
		}
		raw := &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}
		if a.cfg.watchTimeout > 0 {
			raw.TimeoutSeconds = &a.cfg.watchTimeout
		}
		w, err := a.c.Watch(ctx, list, &client.ListOptions{
			Namespace:     want.GetNamespace(),
			FieldSelector: fields.OneTermEqualSelector("metadata.name", want.GetName()),
			Raw:           raw,
		})
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return
		case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
			rv = ""
			continue
		case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
			send(update{i: i, err: err})
			return
		default:
			a.cfg.logger.Warn("kube: a watch could not start; retrying", "kind", want.GetKind(), "name", want.GetName(), "error", err.Error())
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return
			}
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		rv = a.drain(ctx, i, w, rv, send)
		w.Stop()
		if ctx.Err() == nil && a.cfg.watchEnded != nil {
			a.cfg.watchEnded()
		}
	}
}

// drain reads one watch until it ends and returns the resourceVersion to
// resume from ("" after a 410 Gone: the current state).
func (a *Applier) drain(ctx context.Context, i int, w watch.Interface, rv string, send func(update) bool) string {
	for {
		var ev watch.Event
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				return rv
			}
			ev = e
		case <-ctx.Done():
			return rv
		}
		switch ev.Type {
		case watch.Added, watch.Modified, watch.Deleted:
			u, isU := ev.Object.(*unstructured.Unstructured)
			if !isU {
				continue
			}
			rv = u.GetResourceVersion()
			if !send(update{i: i, obj: u, gone: ev.Type == watch.Deleted}) {
				return rv
			}
		case watch.Bookmark:
			if m, err := meta.Accessor(ev.Object); err == nil {
				rv = m.GetResourceVersion()
			}
		case watch.Error:
			if ctx.Err() != nil {
				return rv // the watch ends because the wait does
			}
			err := apierrors.FromObject(ev.Object)
			var status apierrors.APIStatus
			if errors.As(err, &status) && status.Status().Code == http.StatusGone {
				return ""
			}
			a.cfg.logger.Warn("kube: a watch reported an error; resuming", "error", err.Error())
			return rv
		}
	}
}
