package io.continuum.broker.relay.transport;

import java.util.ArrayList;
import java.util.List;

import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Method;
import io.helidon.http.WritableHeaders;
import io.helidon.http.http2.Http2Headers;

/** Header blocks between the transport's types and Helidon's: a request's HEADERS, a response head. */
final class HelidonHeaders {
    private HelidonHeaders() {
    }

    static Http2Headers request(StreamRequest request, String authority, String defaultUserAgent) {
        WritableHeaders<?> headers = WritableHeaders.create();
        for (Header header : request.headers()) {
            if (header.sensitive()) {
                // Helidon encodes sensitive=true never-indexed only with changing=true (with false it corrupts
                // its HPACK state)
                headers.add(HeaderValues.create(HeaderNames.create(header.name()), true, true, header.value()));
            } else {
                headers.add(HeaderValues.create(HeaderNames.create(header.name()), header.value()));
            }
        }
        if (!headers.contains(HeaderNames.USER_AGENT)) {
            headers.add(HeaderValues.create(HeaderNames.USER_AGENT, defaultUserAgent));
        }
        return Http2Headers.create(headers)
                .method(Method.create(request.method()))
                .path(request.path())
                .scheme("https")
                .authority(authority);
    }

    static ResponseHead responseHead(Http2Headers headers) {
        List<Header> list = new ArrayList<>();
        for (io.helidon.http.Header header : headers.httpHeaders()) {
            for (String value : header.allValues()) {
                list.add(new Header(header.name(), value, header.sensitive()));
            }
        }
        return new ResponseHead(headers.status().code(), list);
    }
}
