package io.github.kinesisshellspout;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import java.util.Collections;
import java.util.Map;

/**
 * Kryo serializer for {@code Collections.emptyMap()}. Storm 2.8's metrics data points carry one (their
 * {@code dimensions}), and Storm does not register its class: a worker sending its metrics to a metrics
 * consumer in another worker halts ("Class is not registered: java.util.Collections$EmptyMap").
 * KinesisShellSpout registers this serializer, so that its metrics can be consumed at all.
 */
public class EmptyMapSerializer extends Serializer<Map<Object, Object>> {
    public static final String EMPTY_MAP_CLASS = "java.util.Collections$EmptyMap";

    public EmptyMapSerializer() {
        setImmutable(true);
    }

    @Override
    public void write(Kryo kryo, Output output, Map<Object, Object> map) {
        // nothing: there is one empty map
    }

    @Override
    public Map<Object, Object> read(Kryo kryo, Input input, Class<? extends Map<Object, Object>> type) {
        return Collections.emptyMap();
    }
}
