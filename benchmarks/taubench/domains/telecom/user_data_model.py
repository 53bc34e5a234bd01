"""Telecom (user side) state: the customer's phone and surroundings, as tau2's `user_db.toml` schema has them.

The user simulator's tools read and change this state; the official reward asserts on it. Field names, defaults and
order follow the reference (its dump is fingerprinted as the user DB). Every record forbids unknown fields.
"""

from __future__ import annotations

from enum import Enum
from typing import Optional

from pydantic import BaseModel, ConfigDict, Field


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SimStatus(str, Enum):
    """SIM card states."""

    ACTIVE = "active"
    MISSING = "missing"
    LOCKED_PIN = "locked_pin"
    LOCKED_PUK = "locked_puk"


class NetworkTechnology(str, Enum):
    """Cellular technologies."""

    NONE = "none"
    TWO_G = "2G"
    THREE_G = "3G"
    FOUR_G = "4G"
    FIVE_G = "5G"


class NetworkModePreference(str, Enum):
    """The phone's preferred network mode."""

    FOUR_G_5G_PREFERRED = "4g_5g_preferred"
    FOUR_G_ONLY = "4g_only"
    THREE_G_ONLY = "3g_only"
    TWO_G_ONLY = "2g_only"


class SignalStrength(str, Enum):
    """Signal bars."""

    NONE = "none"
    POOR = "poor"
    FAIR = "fair"
    GOOD = "good"
    EXCELLENT = "excellent"


class PerformanceLevel(str, Enum):
    """Quality of a VPN server."""

    UNKNOWN = "unknown"
    POOR = "poor"
    FAIR = "fair"
    GOOD = "good"
    EXCELLENT = "excellent"


class NetworkStatus(str, Enum):
    """Cellular connection states."""

    CONNECTED = "connected"
    SEARCHING = "searching"
    NO_SERVICE = "no_service"
    EMERGENCY_ONLY = "emergency_only"


class APNNames(str, Enum):
    """APN names: the working one and a broken one."""

    INTERNET = "internet"
    BROKEN = "broken"


class APNSettings(_Record):
    """The active access point configuration."""

    apn_name: APNNames = Field(APNNames.INTERNET, description="APN name")
    reset_at_reboot: bool = Field(False, description="Whether the settings reset at the next reboot")
    mms_apn: Optional[str] = Field("mms", description="APN used for MMS")
    mmsc_url: Optional[str] = Field("http://mms.carrier.com/mms/wapenc", description="MMS centre URL (needed for MMS)")
    mms_proxy: Optional[str] = Field(None, description="MMS proxy address")
    mms_port: Optional[int] = Field(None, description="MMS proxy port")


class VpnDetails(_Record):
    """The connected VPN."""

    server_address: Optional[str] = Field(None, description="VPN server")
    protocol: Optional[str] = Field(None, description="VPN protocol")
    server_performance: PerformanceLevel = Field(
        default=PerformanceLevel.UNKNOWN, validate_default=True, description="Server quality"
    )


class AppPermissions(_Record):
    """An app's permissions."""

    sms: bool = Field(False, description="Send and read SMS/MMS")
    storage: bool = Field(False, description="Access storage")
    phone: bool = Field(False, description="Make calls")
    network: bool = Field(False, description="Access the network")


class AppStatus(_Record):
    """An installed app."""

    app_name: str
    permissions: AppPermissions = Field(default_factory=AppPermissions, description="Its permissions")


def _default_apps() -> dict[str, AppStatus]:
    return {
        "messaging": AppStatus(app_name="messaging", permissions=AppPermissions(sms=True, storage=True, phone=True)),
        "browser": AppStatus(app_name="browser", permissions=AppPermissions(network=True, storage=True)),
    }


class MockPhoneAttributes(_Record):
    """The state of the customer's phone."""

    sim_card_status: SimStatus = Field(default=SimStatus.ACTIVE, validate_default=True, description="SIM state")
    sim_card_missing: bool = Field(False, description="Whether the SIM is out of its slot")
    airplane_mode: bool = Field(False, description="Airplane mode")
    network_signal_strength: SignalStrength = Field(
        default=SignalStrength.GOOD, validate_default=True, description="Cellular signal"
    )
    network_technology_connected: NetworkTechnology = Field(
        default=NetworkTechnology.FIVE_G, validate_default=True, description="Connected technology"
    )
    network_connection_status: NetworkStatus = Field(
        default=NetworkStatus.CONNECTED, validate_default=True, description="Cellular status"
    )
    battery_level: int = Field(80, description="Battery, 0-100")
    data_enabled: bool = Field(True, description="Mobile data switch")
    roaming_enabled: bool = Field(False, description="Data roaming switch")
    network_mode_preference: NetworkModePreference = Field(
        default=NetworkModePreference.FOUR_G_5G_PREFERRED, validate_default=True, description="Preferred mode"
    )
    active_apn_settings: APNSettings = Field(default_factory=APNSettings, description="Active APN")
    wifi_enabled: bool = Field(False, description="Wi-Fi radio")
    wifi_connected: bool = Field(False, description="Connected to Wi-Fi")
    wifi_ssid: Optional[str] = Field(None, description="Wi-Fi network name")
    wifi_signal_strength: SignalStrength = Field(
        default=SignalStrength.NONE, validate_default=True, description="Wi-Fi signal"
    )
    wifi_calling_enabled: bool = Field(False, description="Wi-Fi calling")
    wifi_calling_mms_over_wifi: bool = Field(False, description="MMS over Wi-Fi")
    data_saver_mode: bool = Field(False, description="Data saver")
    vpn_enabled_setting: bool = Field(False, description="VPN configured")
    vpn_connected: bool = Field(False, description="VPN tunnel up")
    vpn_details: Optional[VpnDetails] = Field(None, description="The connected VPN")
    app_statuses: dict[str, AppStatus] = Field(default_factory=_default_apps, description="Installed apps")


class PaymentRequest(_Record):
    """A payment the agent asked the customer to make."""

    bill_id: str = Field(description="The bill")
    amount_due: float = Field(description="Amount (USD)")
    paid: bool = Field(default=False, description="Whether it was paid")


def _default_signal() -> dict[NetworkTechnology, SignalStrength]:
    return {
        NetworkTechnology.TWO_G: SignalStrength.POOR,
        NetworkTechnology.THREE_G: SignalStrength.FAIR,
        NetworkTechnology.FOUR_G: SignalStrength.GOOD,
        NetworkTechnology.FIVE_G: SignalStrength.EXCELLENT,
    }


class UserSurroundings(_Record):
    """Where the customer is and what the network allows there."""

    name: Optional[str] = Field(None, description="Customer name")
    phone_number: Optional[str] = Field(None, description="Customer phone number")
    is_abroad: bool = Field(False, description="Whether the customer is abroad")
    roaming_allowed: bool = Field(False, description="Whether the line may roam")
    signal_strength: dict[NetworkTechnology, SignalStrength] = Field(
        default_factory=_default_signal, description="Signal per technology at this place"
    )
    mobile_data_usage_exceeded: bool = Field(False, description="Whether the data allowance is used up")
    line_active: bool = Field(True, description="Whether the line is active")
    payment_request: Optional[PaymentRequest] = Field(None, description="The pending payment request")


class TelecomUserDB(_Record):
    """The customer's side of the world: phone and surroundings."""

    device: MockPhoneAttributes = Field(default_factory=MockPhoneAttributes, description="The phone")
    surroundings: UserSurroundings = Field(default_factory=UserSurroundings, description="The surroundings")
