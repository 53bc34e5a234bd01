"""The telecom customer's own tools (dual control): the phone's settings and checks, with tau2's exact texts.

The user simulator calls the `@tool` methods on its phone (`TelecomUserDB`). The class also has the reference's
task-setup functions (`set_user_info`, `turn_roaming_off`, `break_apn_settings`, ...) and reward assertions
(`assert_*`), which tasks call by name. The class name matters: Python's argument errors name
`TelecomUserTools.<tool>()`.
"""

from __future__ import annotations

from typing import Any, Literal, Optional, Union

from benchmarks.taubench.domain_tools import DomainTools, tool
from benchmarks.taubench.domains.telecom.user_data_model import (
    APNNames,
    APNSettings,
    MockPhoneAttributes,
    NetworkModePreference,
    NetworkStatus,
    NetworkTechnology,
    PaymentRequest,
    PerformanceLevel,
    SignalStrength,
    SimStatus,
    TelecomUserDB,
    UserSurroundings,
    VpnDetails,
)
from benchmarks.taubench.tasks import TaskSet

_BARS = {
    SignalStrength.NONE: "📵 No Signal",
    SignalStrength.POOR: "📶¹ Poor",
    SignalStrength.FAIR: "📶² Fair",
    SignalStrength.GOOD: "📶³ Good",
    SignalStrength.EXCELLENT: "📶⁴ Excellent",
}
_SPEED_RANGE = {
    NetworkTechnology.TWO_G: (0.1, 0.4),
    NetworkTechnology.THREE_G: (1.0, 5.0),
    NetworkTechnology.FOUR_G: (10.0, 100.0),
    NetworkTechnology.FIVE_G: (50.0, 500.0),
    NetworkTechnology.NONE: (0.0, 0.0),
}
_SIGNAL_FACTOR = {
    SignalStrength.POOR: 0.2,
    SignalStrength.FAIR: 0.5,
    SignalStrength.GOOD: 0.8,
    SignalStrength.EXCELLENT: 1.0,
    SignalStrength.NONE: 0.0,
}
_SPEED_ADVICE = {
    "Very Poor": "Connection is very slow. Basic web browsing might be difficult.",
    "Poor": "Connection is slow. Web browsing may be sluggish, streaming difficult.",
    "Fair": "Connection is okay for web browsing and some standard definition streaming.",
    "Good": "Connection is good for most activities, including HD streaming.",
    "Excellent": "Connection is very fast.",
}
_SIM_TEXT = {
    SimStatus.ACTIVE: "Your SIM card is active and working.",
    SimStatus.MISSING: "No SIM card detected in the phone.",
    SimStatus.LOCKED_PIN: "The SIM card is locked with a PIN code.",
    SimStatus.LOCKED_PUK: "The SIM card is locked with a PUK code.",
}
_MODE_TECH = {
    NetworkModePreference.FOUR_G_ONLY: NetworkTechnology.FOUR_G,
    NetworkModePreference.THREE_G_ONLY: NetworkTechnology.THREE_G,
    NetworkModePreference.TWO_G_ONLY: NetworkTechnology.TWO_G,
}
DEFAULT_VPN = VpnDetails(server_address="192.168.1.1", protocol="OpenVPN", server_performance=PerformanceLevel.EXCELLENT)
"""The VPN a `connect_vpn` connects to. Each phone gets its own copy, used for every connection: in the reference one
object is shared, so after `break_vpn` degraded it a reconnect is slow too. We keep that within a conversation, but
not across conversations (the reference's object is shared by the whole process)."""


def _on_off(flag: bool) -> str:
    return "ON" if flag else "OFF"


class TelecomUserTools(DomainTools):
    """The customer's phone: tools the user simulator calls, over a `TelecomUserDB`."""

    db: TelecomUserDB

    def __init__(self, db: Any, task_set: TaskSet = "v1") -> None:
        super().__init__(db, task_set)
        self._vpn = DEFAULT_VPN.model_copy()

    @property
    def device(self) -> MockPhoneAttributes:
        """The phone's state."""
        return self.db.device

    @property
    def surroundings(self) -> UserSurroundings:
        """The customer's surroundings."""
        return self.db.surroundings

    # --- state helpers -------------------------------------------------------------------------

    def _status_bar(self) -> str:
        device = self.device
        parts = []
        if device.airplane_mode:
            parts.append("✈️ Airplane Mode")
        else:
            parts.append(_BARS.get(device.network_signal_strength, "📵 No Signal"))
            has_network = device.network_technology_connected != NetworkTechnology.NONE
            if has_network:
                parts.append(device.network_technology_connected.value)
            if device.data_enabled and has_network:
                parts.append("📱 Data Enabled")
                if device.data_saver_mode:
                    parts.append("🔽 Data Saver")
            else:
                parts.append("📵 Data Disabled")
        if device.wifi_enabled and device.wifi_connected:
            parts.append(f"📡 Connected to {device.wifi_ssid}" if device.wifi_ssid else "📡 Enabled")
        if device.vpn_connected:
            parts.append("🔒 VPN Connected")
        parts.append(f"🔋 {device.battery_level}%")
        return " | ".join(parts)

    def _with_bar(self, text: str) -> str:
        return f"{text}\nStatus Bar: {self._status_bar()}"

    def _sim_status(self) -> SimStatus:
        return SimStatus.MISSING if self.device.sim_card_missing else self.device.sim_card_status

    def _no_service(self) -> None:
        self.device.network_connection_status = NetworkStatus.NO_SERVICE
        self.device.network_technology_connected = NetworkTechnology.NONE
        self.device.network_signal_strength = SignalStrength.NONE

    def _connect(self, technology: NetworkTechnology) -> None:
        self.device.network_technology_connected = technology
        self.device.network_signal_strength = self.surroundings.signal_strength.get(technology, SignalStrength.NONE)

    def simulate_network_search(self) -> None:
        """Reconnect the phone as its SIM, mode preference, airplane mode, APN and line allow."""
        if self._sim_status() == SimStatus.ACTIVE:
            self.device.network_connection_status = NetworkStatus.CONNECTED
            preference = self.device.network_mode_preference
            if preference == NetworkModePreference.FOUR_G_5G_PREFERRED:
                five_g = self.surroundings.signal_strength.get(NetworkTechnology.FIVE_G, SignalStrength.NONE)
                self._connect(NetworkTechnology.FOUR_G if five_g == SignalStrength.NONE else NetworkTechnology.FIVE_G)
            else:
                self._connect(_MODE_TECH.get(preference, NetworkTechnology.FOUR_G))
        else:
            self._no_service()
        if (
            self.device.airplane_mode
            or self.device.active_apn_settings.apn_name == APNNames.BROKEN
            or not self.surroundings.line_active
        ):
            self._no_service()

    def mobile_data_working(self) -> bool:
        """Whether mobile data works: radio, service, roaming abroad, the data switch and the allowance."""
        device, place = self.device, self.surroundings
        if device.airplane_mode or device.network_signal_strength == SignalStrength.NONE:
            return False
        if device.network_connection_status == NetworkStatus.NO_SERVICE:
            return False
        if place.is_abroad and (not device.roaming_enabled or not place.roaming_allowed):
            return False
        return device.data_enabled and not place.mobile_data_usage_exceeded

    def _speed(self) -> tuple[Optional[float], Optional[str]]:
        if not self.mobile_data_working():
            return None, "No Connection"
        device = self.device
        factor = 1.0
        if device.vpn_connected and device.vpn_details and device.vpn_details.server_performance == PerformanceLevel.POOR:
            factor = 0.1
        if device.data_saver_mode:
            factor *= 0.2
        low, high = _SPEED_RANGE.get(device.network_technology_connected, (0.0, 0.0))
        speed = round((low + high) / 2.0 * _SIGNAL_FACTOR.get(device.network_signal_strength, 0.0) * factor, 2)
        for limit, label in ((1, "Very Poor"), (5, "Poor"), (25, "Fair"), (100, "Good")):
            if speed < limit:
                return speed, label
        return speed, "Excellent"

    def can_send_mms_now(self) -> bool:
        """Whether the messaging app can send an MMS (data, not 2G, no MMS over Wi-Fi calling, MMSC, permissions)."""
        device = self.device
        if not self.mobile_data_working() or device.network_technology_connected == NetworkTechnology.TWO_G:
            return False
        if device.wifi_calling_enabled and device.wifi_calling_mms_over_wifi:
            return False
        if device.active_apn_settings.mmsc_url is None:
            return False
        messaging = device.app_statuses.get("messaging")
        return messaging is not None and messaging.permissions.storage and messaging.permissions.sms

    def _toggle_airplane(self) -> bool:
        device = self.device
        was_on = device.airplane_mode
        device.airplane_mode = not was_on
        if was_on:
            device.network_connection_status = NetworkStatus.SEARCHING
        if not was_on or device.wifi_enabled:
            device.wifi_connected = False
            device.wifi_ssid = None
            device.wifi_signal_strength = SignalStrength.NONE
        if not was_on and device.vpn_connected:
            self._disconnect_vpn()
        self.simulate_network_search()
        return device.airplane_mode

    def _toggle_data(self) -> bool:
        self.device.data_enabled = not self.device.data_enabled
        self.simulate_network_search()
        return self.device.data_enabled

    def _toggle_roaming(self) -> bool:
        self.device.roaming_enabled = not self.device.roaming_enabled
        self.simulate_network_search()
        return self.device.roaming_enabled

    def _toggle_data_saver(self) -> bool:
        self.device.data_saver_mode = not self.device.data_saver_mode
        return self.device.data_saver_mode

    def _toggle_wifi_calling(self) -> bool:
        self.device.wifi_calling_enabled = not self.device.wifi_calling_enabled
        return self.device.wifi_calling_enabled

    def _connect_vpn(self) -> Optional[bool]:
        if self.device.vpn_connected:
            return None
        self.device.vpn_connected = True
        self.device.vpn_details = self._vpn
        return True

    def _disconnect_vpn(self) -> bool:
        if not self.device.vpn_connected:
            return False
        self.device.vpn_connected = False
        self.device.vpn_details = None
        return True

    @staticmethod
    def _granted(permissions: Any) -> list[str]:
        return [name.replace("_", " ").lower() for name, allowed in permissions.model_dump().items() if allowed]

    # --- tools ---------------------------------------------------------------------------------

    @tool("read")
    def check_status_bar(self) -> str:
        """Look at the phone's status bar: signal, network type, data, Wi-Fi, VPN and battery indicators.

        Returns:
            The status bar as text.
        """
        return f"Status Bar: {self._status_bar()}"

    @tool("read")
    def check_network_status(self) -> str:
        """Open the phone's network settings summary: airplane mode, SIM, cellular connection, data, roaming, Wi-Fi.

        Returns:
            One line per setting.
        """
        device = self.device
        lines = [
            f"Airplane Mode: {_on_off(device.airplane_mode)}",
            f"SIM Card Status: {self._sim_status().value}",
            f"Cellular Connection: {device.network_connection_status.value}",
            f"Cellular Signal: {device.network_signal_strength.value}",
            f"Cellular Network Type: {device.network_technology_connected.value}",
            f"Mobile Data Enabled: {'Yes' if device.data_enabled else 'No'}",
            f"Data Roaming Enabled: {'Yes' if device.roaming_enabled else 'No'}",
            f"Wi-Fi Radio: {_on_off(device.wifi_enabled)}",
            f"Wi-Fi Connected: {'Yes' if device.wifi_connected else 'No'}",
        ]
        if device.wifi_connected:
            lines.append(f"Connected Wi-Fi Network: {device.wifi_ssid}")
        return "\n".join(lines)

    @tool("read")
    def check_network_mode_preference(self) -> str:
        """See which cellular network mode the phone prefers (e.g. 4G/5G preferred, 3G only).

        Returns:
            The preferred mode.
        """
        return f"Network Mode Preference: {self.device.network_mode_preference.value}"

    @tool("write")
    def set_network_mode_preference(self, mode: str) -> str:
        """Change the phone's preferred network mode; the phone then searches for the network again.

        Args:
            mode: One of '4g_5g_preferred', '4g_only', '3g_only', '2g_only'.

        Returns:
            The new mode (or why it was refused) and the status bar.
        """
        try:
            chosen = mode if isinstance(mode, NetworkModePreference) else NetworkModePreference(mode)
            self.device.network_mode_preference = chosen
            self.simulate_network_search()
        except ValueError:
            valid = ", ".join(m.value for m in NetworkModePreference)
            return self._with_bar(f"Failed to set network mode: '{mode}' is not a valid option. Please use one of: {valid}")
        return self._with_bar(f"Preferred Network Mode set to: {chosen.value}")

    @tool("read")
    def run_speed_test(self) -> str:
        """Measure the mobile data speed of the phone.

        Returns:
            The speed in Mbps with a quality label, or why the test failed.
        """
        speed, label = self._speed()
        if speed is None:
            return f"Speed test failed: {label or 'Could not determine speed'}."
        return f"Speed Test Result: {speed:.2f} Mbps ({label}). {_SPEED_ADVICE.get(label or '', '')}"

    @tool("write")
    def toggle_airplane_mode(self) -> str:
        """Switch airplane mode on or off (on disconnects every radio).

        Returns:
            The new state and the status bar.
        """
        return self._with_bar(f"Airplane Mode is now {_on_off(self._toggle_airplane())}.")

    @tool("read")
    def check_sim_status(self) -> str:
        """Check whether the SIM card is present, active or locked.

        Returns:
            The SIM card's state.
        """
        status = self._sim_status()
        return _SIM_TEXT.get(status, f"Unknown SIM status: {status.value}")

    @tool("write")
    def reseat_sim_card(self) -> str:
        """Take the SIM card out and put it back in; the phone then searches for the network again.

        Returns:
            A confirmation and the status bar.
        """
        self.device.sim_card_missing = False
        self.simulate_network_search()
        return self._with_bar("SIM card re-seated successfully.")

    @tool("write")
    def toggle_data(self) -> str:
        """Switch mobile data on or off.

        Returns:
            The new state and the status bar.
        """
        return self._with_bar(f"Mobile Data is now {_on_off(self._toggle_data())}.")

    @tool("write")
    def toggle_roaming(self) -> str:
        """Switch data roaming on or off on the phone.

        Returns:
            The new state and the status bar.
        """
        return self._with_bar(f"Data Roaming is now {_on_off(self._toggle_roaming())}.")

    @tool("read")
    def check_data_restriction_status(self) -> str:
        """Check whether Data Saver mode restricts data use.

        Returns:
            Data Saver's state.
        """
        on = self.device.data_saver_mode
        return "Data Saver mode is ON (limits data usage)." if on else "Data Saver mode is OFF."

    @tool("write")
    def toggle_data_saver_mode(self) -> str:
        """Switch Data Saver mode on or off.

        Returns:
            The new state and the status bar.
        """
        return self._with_bar(f"Data Saver Mode is now {_on_off(self._toggle_data_saver())}.")

    @tool("read")
    def check_apn_settings(self) -> str:
        """Show the phone's access point (APN) settings, including the MMS centre URL.

        Returns:
            The APN name and MMSC URL.
        """
        settings = self.device.active_apn_settings
        return (
            f"Current APN Name: {settings.apn_name.value or 'Not Set'}\n"
            f"MMSC URL (for picture messages): {settings.mmsc_url or 'Not Set'}\n"
            "(These are technical settings, usually best left unchanged.)"
        )

    @tool("write")
    def set_apn_settings(self, apn_settings: Union[APNSettings, dict[str, Any]]) -> str:
        """Replace the phone's APN settings.

        Args:
            apn_settings: The new settings (apn_name, reset_at_reboot, mms_apn, mmsc_url, mms_proxy, mms_port).

        Returns:
            The new APN name and the status bar.
        """
        if isinstance(apn_settings, dict):
            apn_settings = APNSettings(**apn_settings)
        self.device.active_apn_settings = apn_settings
        self.simulate_network_search()
        return self._with_bar(f"APN settings set to: {apn_settings.apn_name.value}")

    @tool("write")
    def reset_apn_settings(self) -> str:
        """Reset the APN settings to the carrier's defaults; the reset takes effect at the next reboot.

        Returns:
            A confirmation and the status bar.
        """
        self.device.active_apn_settings.reset_at_reboot = True
        self.simulate_network_search()
        return self._with_bar("APN settings will reset at reboot.")

    @tool("read")
    def check_wifi_status(self) -> str:
        """Check whether Wi-Fi is on and which network it is connected to.

        Returns:
            Wi-Fi's state.
        """
        device = self.device
        if not device.wifi_enabled:
            return "Wi-Fi is turned OFF."
        if device.wifi_connected:
            return (
                f"Wi-Fi is ON and connected to '{device.wifi_ssid}'. "
                f"Signal strength: {device.wifi_signal_strength.value}."
            )
        return "Wi-Fi is ON but not connected to any network."

    @tool("write")
    def toggle_wifi(self) -> str:
        """Switch the Wi-Fi radio on or off (not possible in airplane mode).

        Returns:
            The new state and the status bar.
        """
        device = self.device
        if device.airplane_mode:
            return self._with_bar("Cannot change Wi-Fi settings while Airplane Mode is ON.")
        device.wifi_enabled = not device.wifi_enabled
        if not device.wifi_enabled:
            device.wifi_connected = False
            device.wifi_ssid = None
            device.wifi_signal_strength = SignalStrength.NONE
        return self._with_bar(f"Wi-Fi is now {_on_off(device.wifi_enabled)}.")

    @tool("read")
    def check_wifi_calling_status(self) -> str:
        """Check whether Wi-Fi Calling is on.

        Returns:
            Wi-Fi Calling's state.
        """
        return f"Wi-Fi Calling is currently turned {_on_off(self.device.wifi_calling_enabled)}."

    @tool("write")
    def toggle_wifi_calling(self) -> str:
        """Switch Wi-Fi Calling on or off.

        Returns:
            The new state and the status bar.
        """
        return self._with_bar(f"Wi-Fi Calling is now {_on_off(self._toggle_wifi_calling())}.")

    @tool("read")
    def check_vpn_status(self) -> str:
        """Check whether a VPN is configured and connected, with its details.

        Returns:
            The VPN's state.
        """
        device = self.device
        if device.vpn_connected:
            details = device.vpn_details.model_dump() if device.vpn_details else None
            if details:
                return f"VPN is ON and connected. Details: {details}"
            return "VPN is ON and connected (no specific details available)."
        if device.vpn_enabled_setting:
            return "VPN is turned ON in settings, but currently not connected."
        return "VPN is turned OFF."

    @tool("write")
    def connect_vpn(self) -> str:
        """Connect the phone's VPN.

        Returns:
            A confirmation (or that it was already connected) and the status bar.
        """
        connected = self._connect_vpn()
        if connected is None:
            return "VPN already connected."
        return self._with_bar("VPN connected successfully.")

    @tool("write")
    def disconnect_vpn(self) -> str:
        """Disconnect the phone's VPN.

        Returns:
            A confirmation (or that none was connected) and the status bar.
        """
        done = self._disconnect_vpn()
        return self._with_bar("VPN disconnected successfully." if done else "No active VPN connection to disconnect.")

    @tool("read")
    def check_installed_apps(self) -> str:
        """List the apps installed on the phone.

        Returns:
            The app names.
        """
        return f"The following apps are installed on the phone: {', '.join(self.device.app_statuses)}"

    @tool("read")
    def check_app_status(self, app_name: str) -> str:
        """Show an app's status, including the permissions it has.

        Args:
            app_name: The app, e.g. 'messaging'.

        Returns:
            The app's permissions, or that it is not installed.
        """
        app = self.device.app_statuses.get(app_name)
        if not app:
            return f"App '{app_name}' not found on this phone."
        granted = self._granted(app.permissions)
        lines = [f"Status for App: {app_name}"]
        if granted:
            lines.append(" - Permissions Granted:")
            lines += [f"   - {permission}" for permission in granted]
        else:
            lines.append(" - Permissions: None granted.")
        return "\n".join(lines)

    @tool("read")
    def check_app_permissions(self, app_name: str) -> str:
        """List the permissions an app has.

        Args:
            app_name: The app, e.g. 'messaging'.

        Returns:
            The granted permissions, or that the app is not installed.
        """
        app = self.device.app_statuses.get(app_name)
        if not app:
            return f"App '{app_name}' not found on this phone."
        granted = self._granted(app.permissions)
        if not granted:
            return f"App '{app_name}' currently has no permissions granted."
        return f"App '{app_name}' has permission for: {', '.join(granted)}."

    @tool("write")
    def grant_app_permission(self, app_name: str, permission: str) -> str:
        """Grant an app a permission.

        Args:
            app_name: The app, e.g. 'messaging'.
            permission: One of 'sms', 'storage', 'phone', 'network'.

        Returns:
            Success or the error, and the status bar.
        """
        app = self.device.app_statuses.get(app_name)
        permission = permission.lower()
        if not app:
            ok, message = False, f"App '{app_name}' not found. Cannot grant permission."
        else:
            available = list(app.permissions.model_dump())
            if permission not in available:
                ok = False
                message = f"Permission '{permission}' not tracked for app '{app_name}', available permissions: {available}"
            else:
                setattr(app.permissions, permission, True)
                ok, message = True, f"Permission '{permission}' granted to app '{app_name}'."
        return self._with_bar(f"{'Success. ' if ok else 'Error. '}{message}")

    @tool("read")
    def can_send_mms(self) -> str:
        """Check whether the messaging app can send MMS (picture) messages.

        Returns:
            Whether it can.
        """
        can = self.can_send_mms_now()
        return f"Your messaging app {'can' if can else 'cannot'} send MMS messages."

    @tool("write")
    def reboot_device(self) -> str:
        """Restart the phone (APN settings marked for reset are reset).

        Returns:
            What happened and the status bar.
        """
        lines = []
        if self.device.active_apn_settings.reset_at_reboot:
            lines.append("Resetting APN settings...")
            self.device.active_apn_settings = APNSettings()
        lines.append("Restarting network services...")
        self.device.network_connection_status = NetworkStatus.SEARCHING
        self.simulate_network_search()
        return self._with_bar("\n".join(lines))

    @tool("read")
    def check_payment_request(self) -> str:
        """Check whether the carrier has sent a payment request.

        Returns:
            The request's bill and amount, or that there is none.
        """
        request = self.surroundings.payment_request
        if request is None:
            return "No payment request has been made."
        return f"You have a payment request for bill {request.bill_id} of {request.amount_due} USD."

    @tool("write")
    def make_payment(self) -> str:
        """Pay the pending payment request.

        Returns:
            A confirmation, or that there is no request.
        """
        request = self.surroundings.payment_request
        if request is None:
            return "You do not have a payment request."
        request.paid = True
        return f"Payment of {request.amount_due} USD has been made for bill {request.bill_id}."

    # --- task set-up functions (initialization_actions) ------------------------------------------

    def set_user_info(self, name: str, phone_number: str) -> None:
        """Set the customer's name and phone number."""
        self.surroundings.name = name
        self.surroundings.phone_number = phone_number

    def set_user_location(self, abroad: bool) -> None:
        """Put the customer at home or abroad."""
        self.surroundings.is_abroad = abroad

    def _force(self, toggle: Any, want: bool) -> None:
        if toggle() != want:
            toggle()

    def turn_airplane_mode_on(self) -> str:
        """Set airplane mode on."""
        self._force(self._toggle_airplane, True)
        return "Airplane Mode is now ON."

    def turn_airplane_mode_off(self) -> str:
        """Set airplane mode off."""
        self._force(self._toggle_airplane, False)
        return "Airplane Mode is now OFF."

    def unseat_sim_card(self) -> str:
        """Take the SIM card out."""
        self.device.sim_card_missing = True
        self.simulate_network_search()
        return "SIM card un-seated successfully."

    def lock_sim_card(self, mode: Literal["pin", "puk"]) -> str:
        """Lock the SIM with a PIN or PUK."""
        if mode == "pin":
            self.device.sim_card_status = SimStatus.LOCKED_PIN
        elif mode == "puk":
            self.device.sim_card_status = SimStatus.LOCKED_PUK
        self.simulate_network_search()
        return f"SIM card locked successfully in {mode} mode."

    def turn_data_on(self) -> str:
        """Set mobile data on (no network search, as in the reference)."""
        self.device.data_enabled = True
        return "Data connection restored."

    def turn_data_off(self) -> str:
        """Set mobile data off."""
        self._force(self._toggle_data, False)
        return "Data connection broken."

    def turn_roaming_on(self) -> str:
        """Set data roaming on."""
        self._force(self._toggle_roaming, True)
        return "Data Roaming is now ON."

    def turn_roaming_off(self) -> str:
        """Set data roaming off."""
        self._force(self._toggle_roaming, False)
        return "Data Roaming is now OFF."

    def turn_data_saver_mode_on(self) -> str:
        """Set Data Saver on."""
        self._force(self._toggle_data_saver, True)
        return "Data Saver Mode is now ON."

    def turn_data_saver_mode_off(self) -> str:
        """Set Data Saver off."""
        self._force(self._toggle_data_saver, False)
        return "Data Saver Mode is now OFF."

    def break_apn_settings(self) -> str:
        """Break the APN (no service until it is reset)."""
        self.device.active_apn_settings.apn_name = APNNames.BROKEN
        self.simulate_network_search()
        return "APN settings broken. Please call reset_apn_settings() to fix."

    def break_apn_mms_setting(self) -> str:
        """Remove the MMSC URL (no MMS until the APN is reset)."""
        self.device.active_apn_settings.mmsc_url = None
        return "APN MMS setting broken. Please call reset_apn_settings() to fix."

    def set_wifi_calling(self, enabled: bool, mms_over_wifi: Optional[bool] = None) -> str:
        """Set Wi-Fi Calling and, if given, MMS over Wi-Fi."""
        if self.device.wifi_calling_enabled != enabled:
            self._toggle_wifi_calling()
        message = f"Wi-Fi Calling is now {_on_off(enabled)}."
        if mms_over_wifi is not None:
            self.device.wifi_calling_mms_over_wifi = mms_over_wifi
            message += f"\nMMS over Wi-Fi is now {_on_off(mms_over_wifi)}."
        return message

    def break_vpn(self) -> str:
        """Connect a VPN whose server performs poorly."""
        self.connect_vpn()
        assert self.device.vpn_details is not None
        self.device.vpn_details.server_performance = PerformanceLevel.POOR
        return "VPN connection broken."

    def remove_app_permission(self, app_name: str, permission: str) -> tuple[bool, str]:
        """Take a permission away from an app."""
        app = self.device.app_statuses.get(app_name)
        permission = permission.lower()
        if not app:
            return False, f"App '{app_name}' not found. Cannot remove permission."
        if not hasattr(app.permissions, permission):
            return False, f"Permission '{permission}' not tracked for app '{app_name}'."
        setattr(app.permissions, permission, False)
        return True, f"Permission '{permission}' removed from app '{app_name}'."

    def set_payment_request(self, bill_id: str, amount_due: float) -> None:
        """Put a payment request on the phone (the environment's sync does it)."""
        self.surroundings.payment_request = PaymentRequest(bill_id=bill_id, amount_due=amount_due)

    # --- reward assertions (env_assertions) ------------------------------------------------------

    def assert_airplane_mode_status(self, expected_status: bool) -> bool:
        """Whether airplane mode is as expected."""
        return self.device.airplane_mode == expected_status

    def assert_service_status(self, expected_status: str) -> bool:
        """Whether the cellular status is as expected."""
        return self.device.network_connection_status == NetworkStatus(expected_status)

    def assert_mobile_data_status(self, expected_status: bool) -> bool:
        """Whether mobile data works as expected."""
        return self.mobile_data_working() == expected_status

    def assert_mobile_roaming_status(self, expected_status: bool) -> bool:
        """Whether the roaming switch is as expected."""
        return self.device.roaming_enabled == expected_status

    def assert_mobile_data_saver_mode_status(self, expected_status: bool) -> bool:
        """Whether Data Saver is as expected."""
        return self.device.data_saver_mode == expected_status

    def assert_internet_speed(self, expected_speed: float, expected_desc: Optional[str] = None) -> bool:
        """Whether the speed reaches `expected_speed` (and has the label, if given)."""
        speed, label = self._speed()
        speed = speed or 0.0
        if expected_desc is None:
            return speed >= expected_speed
        return speed >= expected_speed and (label or "").lower() == expected_desc.lower()

    def assert_internet_not_excellent(self) -> bool:
        """Whether the speed label is not Excellent."""
        return (self._speed()[1] or "").lower() != "excellent"

    def assert_can_send_mms(self, expected_status: bool) -> bool:
        """Whether MMS sending is as expected."""
        return self.can_send_mms_now() == expected_status

    def assert_mobile_data_usage_exceeded(self, expected_status: bool) -> bool:
        """Whether the data allowance is used up as expected."""
        return self.surroundings.mobile_data_usage_exceeded == expected_status
