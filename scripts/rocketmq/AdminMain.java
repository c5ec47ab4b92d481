/*
 * Runs the RocketMQ 5.3.3 admin CLI (org.apache.rocketmq.tools.command.MQAdminStartup, "mqadmin") and
 * exits as soon as the sub-command returns. Plain MQAdminStartup prints its answer within about a
 * second, then the JVM waits ~5 s more for Netty's non-daemon threads to wind down gracefully; that
 * adds up over the several admin calls of a readiness check. Nothing is pending by then: every admin
 * request is synchronous.
 */
package seatflow.dev.rocketmq;

import org.apache.rocketmq.tools.command.MQAdminStartup;

public final class AdminMain {
    private AdminMain() {
    }

    public static void main(String[] args) {
        MQAdminStartup.main0(args, null);
        System.out.flush();
        System.err.flush();
        System.exit(0);
    }
}
