/*
 * Dev/CI shim for Apache RocketMQ 5.3.3: the broker's HA (master/slave replication) port.
 *
 * DefaultHAService.AcceptSocketService binds new InetSocketAddress(haListenPort), i.e. the wildcard
 * address 0.0.0.0, and 5.3.3 has no config key to change that (bindAddress only applies to the remoting
 * servers on listenPort and listenPort-2; MessageStoreConfig has haListenPort but no HA bind address).
 * The only switch that removes the HA listener, duplicationEnable=true, also stops the commit log from
 * stamping storeTimestamp, which delayed messages need. So this class keeps DefaultHAService as is and
 * only moves its listening socket to the loopback address.
 *
 * DefaultMessageStore loads it through ServiceProvider.loadClass(HAService.class), which reads the
 * resource META-INF/service/org.apache.rocketmq.store.ha.HAService (written by scripts/services.sh next
 * to the compiled class, put first on the broker's class path).
 */
package seatflow.dev.rocketmq;

import java.io.IOException;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import org.apache.rocketmq.store.DefaultMessageStore;
import org.apache.rocketmq.store.config.MessageStoreConfig;
import org.apache.rocketmq.store.ha.DefaultHAConnection;
import org.apache.rocketmq.store.ha.DefaultHAService;
import org.apache.rocketmq.store.ha.HAConnection;

public class LoopbackHAService extends DefaultHAService {

    @Override
    public void init(final DefaultMessageStore store) throws IOException {
        super.init(store);
        this.acceptSocketService = new LoopbackAcceptSocketService(store.getMessageStoreConfig());
    }

    class LoopbackAcceptSocketService extends AcceptSocketService {
        LoopbackAcceptSocketService(final MessageStoreConfig config) {
            super(config);
            try {
                // The listen address is a private final field set by the constructor above.
                Field f = AcceptSocketService.class.getDeclaredField("socketAddressListen");
                f.setAccessible(true);
                f.set(this, new InetSocketAddress(InetAddress.getLoopbackAddress(), config.getHaListenPort()));
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot bind the HA port to loopback", e);
            }
        }

        @Override
        protected HAConnection createConnection(final SocketChannel sc) throws IOException {
            return new DefaultHAConnection(LoopbackHAService.this, sc);
        }

        @Override
        public String getServiceName() {
            return "LoopbackAcceptSocketService";
        }
    }
}
